/**
 * Secrets as configured: a list, or one string of comma-separated secrets (RELAY_SECRET,
 * RELAY_GAME_SERVER_SECRET, RELAY_ADMIN_TOKEN, WEBHOOK_SECRET), each trimmed, empty ones dropped.
 * The first signs; every one verifies, so a secret can rotate without an outage.
 */
export const secretList = (secrets: string | readonly string[] | undefined): string[] =>
  (typeof secrets === 'string' ? secrets.split(',') : [...(secrets ?? [])]).map((s) => s.trim()).filter(Boolean);
