import { GROUPS, SANDBOX_SETTINGS, SETTINGS, type Setting } from './schema.js';

// docs/configuration.md and the environment part of `rewardbus-relay --help`, written from the
// schema: a setting's name, default and words are stated once, in settings/schema/ (the file of its
// concern), and settings/schema.ts puts them in order.

const entries = Object.entries(SETTINGS) as [string, Setting][];

/** The default as the docs show it: its words, or its value (with what that value means). */
function shownDefault(s: { default?: string; defaultText?: string; defaultMeans?: string }): string {
  if (s.defaultText !== undefined) return s.defaultText;
  if (s.default === undefined) return 'absent';
  return `\`${s.default}\`${s.defaultMeans ? ` (${s.defaultMeans})` : ''}`;
}

const table = (rows: [string, { default?: string; defaultText?: string; defaultMeans?: string; docs: string }][]) =>
  ['| setting | default | what it does |', '|---|---|---|', ...rows.map(([name, s]) => `| \`${name}\` | ${shownDefault(s)} | ${s.docs} |`)].join('\n');

const HEADER = `# Configuring the relay

<!-- Written by \`npm run docs:settings\` from src/relay/settings/schema.ts: edit the schema, then run it. -->

The relay reads its settings from the environment, or from \`./.env\` in the directory it starts
in. Every setting is optional; [.env.example](../.env.example) lists them all with a comment
each, and \`rewardbus-relay --help\` prints a one-line summary of each. A program that calls
\`createRelay\` itself passes the same settings as options, with the same defaults.

A setting the relay cannot run with is the first thing it says, on stderr, before it exits 1:
which setting, what was given (never a secret or a database password) and what is accepted:

\`\`\`
LOG_LEVEL="loud" is not accepted: it must be ${SETTINGS.LOG_LEVEL.accepts}.
\`\`\`

Secrets (\`RELAY_SECRET\`, \`RELAY_ADMIN_TOKEN\`, \`WEBHOOK_SECRET\`, \`RELAY_GAME_SERVER_SECRET\`) take a
comma-separated list so that they can be rotated without an outage: see
[deploy.md, Rotating secrets](deploy.md#7-rotating-secrets).`;

const SANDBOX = `## The sandbox alone

\`rewardbus-relay sandbox [port]\` (\`npm run sandbox -- <port>\` in this repository) reads:

${table(Object.entries(SANDBOX_SETTINGS))}`;

/** docs/configuration.md, as the schema says it. */
export function configurationDoc(): string {
  const sections = Object.entries(GROUPS).map(([group, g]) => {
    const rows = entries.filter(([, s]) => s.group === group);
    return [`## ${g.title}`, ...('intro' in g ? [g.intro] : []), table(rows)].join('\n\n');
  });
  return `${[HEADER, ...sections, SANDBOX].join('\n\n')}\n`;
}

/** The settings part of `--help`: one line each, with its default when that is one value. */
export function settingsHelp(indent = '  ', width = 38): string {
  const line = (name: string, s: { default?: string; defaultText?: string; help: string }) =>
    `${indent}${name.length < width ? name.padEnd(width) : `${name} `}${s.help}${s.default && s.defaultText === undefined ? ` (default ${s.default})` : ''}`;
  return [...entries.map(([name, s]) => line(name, s)), ...Object.entries(SANDBOX_SETTINGS).map(([name, s]) => line(name, s))].join('\n');
}
