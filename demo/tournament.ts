// The demo's game server posting the day's high scores (issue 37), as a game's server would:
//   node --import tsx demo/tournament.ts ada:1200 bob:800 cleo:450
// Each argument is a gamertag (one that linked with the relay) and its best score today; the
// ranking, best first, is posted for today's UTC date. The relay pays the places that win a prize
// (demo/catalog.json: 300, 200 and 100 sats) once, however often this runs.
// RELAY_URL (default http://localhost:PORT), RELAY_GAME_SERVER_SECRET (default: the demo's, as npm start sets it).
import { DEFAULTS } from '../src/relay/index.js';
import type { TournamentPosted } from '../src/wire/relay-api.js';
import { DEMO_GAME_SERVER_SECRET, DEMO_TOURNAMENT } from './game-server.js';

/** `gamertag:score` arguments, best score first. */
export function rankingOf(args: readonly string[]): string[] {
  const scores = args.map((a) => {
    const m = /^(.+):(\d+)$/.exec(a);
    if (!m) throw new Error(`${a}: each argument is gamertag:score`);
    return { gamertag: m[1]!, score: Number(m[2]) };
  });
  return scores.sort((a, b) => b.score - a.score).map((s) => s.gamertag);
}

/** Posts the ranking; the relay's answer (201 first, 200 the same results again), or throws with its problem. */
export async function postHighScores(relayUrl: string, secret: string, ranking: string[], period = new Date().toISOString().slice(0, 10)): Promise<TournamentPosted> {
  const r = await fetch(`${relayUrl}/v1/server/tournaments/${DEMO_TOURNAMENT}/results`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
    body: JSON.stringify({ period, ranking }),
  });
  const body = (await r.json()) as TournamentPosted & { code?: string; detail?: string };
  if (!r.ok) throw Object.assign(new Error(`${r.status} ${body.code}: ${body.detail ?? ''}`), { code: body.code, detail: body.detail });
  return body;
}

const NEVER_LINKED = 'Never linked with this relay: ';

/** What to do about the relay's refusal, when the script can say more than the relay: gamertags nobody has played as yet. */
export function hintFor(relayUrl: string, err: { code?: string; detail?: string }): string | undefined {
  if (err.code !== 'unknown_player' || !err.detail?.startsWith(NEVER_LINKED)) return undefined;
  const names = err.detail.slice(NEVER_LINKED.length).split(', ');
  return `Each gamertag must have linked with this relay first: open ${relayUrl}/, link as ${names.join(', then as ')}, and run this again.`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const url = (process.env.RELAY_URL ?? `http://localhost:${process.env.PORT || DEFAULTS.port}`).replace(/\/$/, '');
  const secret = (process.env.RELAY_GAME_SERVER_SECRET || DEMO_GAME_SERVER_SECRET).split(',')[0]!.trim();
  try {
    const posted = await postHighScores(url, secret, rankingOf(process.argv.slice(2)));
    console.log(`${posted.tournamentId} ${posted.period}:`);
    for (const r of posted.rewards) console.log(`  ${r.place}. ${r.userId}  ${r.sats} sats  ${r.status}`);
  } catch (err) {
    // fetch says only "fetch failed" when nothing answers: say where it looked, and what to do.
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    const unreached = err instanceof TypeError && err.message === 'fetch failed';
    console.error(
      unreached ? `No relay answers at RELAY_URL ${url} (${cause ?? 'fetch failed'}): start it with npm start, or set RELAY_URL to where it runs.` : (err as Error).message,
    );
    // On a fresh demo nobody named has played: the relay's refusal alone does not say how to make them players.
    const hint = hintFor(url, err as { code?: string; detail?: string });
    if (hint) console.error(hint);
    process.exit(1);
  }
}
