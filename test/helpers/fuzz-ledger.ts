// `npm run fuzz:ledger -- --runs N [--seed S]`: the ledgers' differential test
// (test/relay/ledger-differential.test.ts) with more runs than `npm test` gives it.
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '1000' }, seed: { type: 'string' } } });
const seed = values.seed ?? String(Date.now() % 2_147_483_647);
console.log(`fuzz:ledger: ${values.runs} runs, seed ${seed} (replay with --seed ${seed})`);
const started = Date.now();
const r = spawnSync('npx', ['vitest', '--run', '--project', 'integration', 'test/relay/ledger-differential.test.ts'], {
  stdio: 'inherit',
  env: { ...process.env, LEDGER_FUZZ_RUNS: values.runs, LEDGER_FUZZ_SEED: seed },
});
console.log(`fuzz:ledger: ${values.runs} runs in ${((Date.now() - started) / 1000).toFixed(0)} s`);
process.exit(r.status ?? 1);
