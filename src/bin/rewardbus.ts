#!/usr/bin/env node
import { existsSync } from 'node:fs';
import { serve } from '@hono/node-server';
import { createLogger, createPaymentsClient, ledgerFile, loadConfig, openSqliteLedger, type LedgerEntry } from '../relay/index.js';
import { createPayouts } from '../relay/payouts.js';
import { createSandbox } from '../sandbox/index.js';
import { startServer } from './serve.js';

const HELP = `rewardbus: pays players sats for achievements

  rewardbus start                         the relay (with the embedded sandbox when no PAYMENTS_API_KEY)
  rewardbus sandbox [port]                the sandbox alone (default port 8788; key: SANDBOX_API_KEY or "sandbox-dev-key")
  rewardbus review list                   intents whose payment outcome is unclear
  rewardbus review reconcile              settle them through the payment-status endpoint, where a transaction id is known
  rewardbus review mark-paid <id> [txid]  the operator checked: it was paid
  rewardbus review mark-failed <id>       the operator checked: nothing was paid (frees its reservation)

Configuration comes from the environment and ./.env; see .env.example.`;

async function main(args: string[]): Promise<number> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  const [command = 'start', sub, ...rest] = args;
  switch (command) {
    case 'start':
      return start();
    case 'sandbox':
      return sandboxAlone(Number(sub ?? process.env.SANDBOX_PORT ?? 8788));
    case 'review':
      return review(sub, rest);
    default:
      console.log(HELP);
      return command === 'help' || command === '--help' ? 0 : 1;
  }
}

async function start(): Promise<number> {
  const running = await startServer(loadConfig());
  const stop = () => void running.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return -1;
}

async function sandboxAlone(port: number): Promise<number> {
  const sandbox = createSandbox({ apiKey: process.env.SANDBOX_API_KEY ?? 'sandbox-dev-key', publicUrl: `http://localhost:${port}` });
  serve({ fetch: sandbox.fetch, port, hostname: '127.0.0.1' }, (info) => console.log(`rewardbus sandbox on http://127.0.0.1:${info.port}`));
  return -1;
}

async function review(sub: string | undefined, rest: string[]): Promise<number> {
  const config = loadConfig();
  const ledger = openSqliteLedger(ledgerFile(config));
  const show = (e: LedgerEntry) =>
    console.log([e.id, new Date(e.createdAt).toISOString(), e.userId, e.gamertag ?? '-', e.achievementId, `${e.sats} sats`, e.reason ?? '', e.paymentId ?? ''].join('\t'));
  try {
    const [id, paymentId] = rest;
    switch (sub) {
      case 'list': {
        const open = await ledger.inState('needs_review');
        if (!open.length) console.log('Nothing to review.');
        open.forEach(show);
        return 0;
      }
      case 'mark-paid':
      case 'mark-failed': {
        if (!id) break;
        const to =
          sub === 'mark-paid'
            ? { state: 'paid' as const, paymentId: paymentId ?? `operator:${new Date().toISOString()}` }
            : { state: 'failed' as const, reason: 'operator_marked_failed' };
        const settled = await ledger.settle(id, ['needs_review'], to);
        if (!settled) {
          console.error(`${id} is not awaiting review.`);
          return 1;
        }
        show(settled);
        return 0;
      }
      case 'reconcile': {
        if (!config.payments) {
          console.error('No PAYMENTS_API_KEY: the embedded sandbox lives in the relay process, which reconciles at start.');
          return 1;
        }
        const payments = createPaymentsClient({ ...config.payments, timeoutMs: config.paymentsTimeoutMs });
        const r = await createPayouts(ledger, payments, createLogger('warn')).reconcile();
        payments.close();
        console.log(`settled ${r.settled}, still open ${r.open}`);
        return 0;
      }
    }
    console.log(HELP);
    return 1;
  } finally {
    await ledger.close().catch(() => undefined);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err: NodeJS.ErrnoException) => {
    console.error(err.code === 'EADDRINUSE' ? `Port ${process.env.PORT ?? 8787} is in use: stop what runs there, or set PORT=…` : err.message);
    process.exit(1);
  },
);
