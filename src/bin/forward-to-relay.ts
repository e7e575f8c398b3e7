#!/usr/bin/env node
// `npx rewardbus …` from a game that installed only the client: the relay is its own package,
// so a game's install builds no server. Runs the relay's command where it is installed, and
// says how to get it where it is not.
const RELAY = '@rewardbus/relay';

try {
  await import(`${RELAY}/cli`);
} catch (err) {
  if ((err as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND' || !String(err).includes(RELAY)) throw err;
  console.error(`The relay is its own package, so that a game's install stays small:

  npx ${RELAY} start            run it once (the demo catalog, the embedded sandbox, no key)
  npm install -D ${RELAY}       keep it in your project; then npx rewardbus-relay start

See https://github.com/rewardbus/rewardbus#install-before-the-packages-are-published`);
  process.exit(2);
}
