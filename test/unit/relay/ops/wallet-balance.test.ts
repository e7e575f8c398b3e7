import { describe, expect, it, vi } from 'vitest';
import { createWalletBalance } from '../../../../src/relay/ops/wallet-balance.js';
import type { Outcome } from '../../../../src/relay/payments/client.js';

/** A payments client with only a wallet, answering what the test says, counting its calls; and a clock the test moves. */
function setup(lowSats = 1000) {
  let t = 1_000_000;
  let answer: Outcome<number> = { kind: 'ok', data: 5000 };
  const payments = { wallet: vi.fn(async () => answer) };
  const logger = { warn: vi.fn(), info: vi.fn() };
  const wallet = createWalletBalance(payments, { lowSats, logger, now: () => t });
  return {
    wallet,
    payments,
    logger,
    tick: (ms: number) => (t += ms),
    answer: (a: Outcome<number>) => (answer = a),
    now: () => t,
    events: (level: 'warn' | 'info') => logger[level].mock.calls.map(([f]) => (f as { event: string }).event),
  };
}

describe('the project wallet balance, read for the admin page and metrics', () => {
  it('knows nothing and asks nothing until read', () => {
    const s = setup();
    expect(s.wallet.peek()).toEqual({ balanceSats: undefined, checkedAt: undefined, low: false });
    expect(s.payments.wallet).not.toHaveBeenCalled();
  });

  it('asks the service at most once a minute, however often it is read', async () => {
    const s = setup();
    expect(await s.wallet.read()).toEqual({ balanceSats: 5000, checkedAt: s.now(), low: false });
    s.answer({ kind: 'ok', data: 4000 });
    s.tick(59_999);
    expect((await s.wallet.read()).balanceSats).toBe(5000);
    expect(s.payments.wallet).toHaveBeenCalledTimes(1);
    s.tick(1);
    expect(await s.wallet.read()).toEqual({ balanceSats: 4000, checkedAt: s.now(), low: false });
    expect(s.payments.wallet).toHaveBeenCalledTimes(2);
  });

  it('shares one call between readers that arrive while it is under way', async () => {
    const s = setup();
    const [a, b] = await Promise.all([s.wallet.read(), s.wallet.read()]);
    expect(a).toBe(b);
    expect(s.payments.wallet).toHaveBeenCalledTimes(1);
  });

  it('warns once when the balance falls below the low mark, and says when it is back above', async () => {
    const s = setup(1000);
    await s.wallet.read();
    s.answer({ kind: 'ok', data: 999 });
    s.tick(60_000);
    expect((await s.wallet.read()).low).toBe(true);
    s.tick(60_000);
    await s.wallet.read();
    expect(s.events('warn')).toEqual(['wallet_low']);
    expect(s.logger.warn.mock.calls[0]![0]).toMatchObject({ balanceSats: 999, lowSats: 1000 });
    s.answer({ kind: 'ok', data: 1000 });
    s.tick(60_000);
    expect((await s.wallet.read()).low).toBe(false);
    expect(s.events('info')).toEqual(['wallet_ok']);
  });

  it('marks the wallet low at once on an insufficient-balance refusal, without asking the service', async () => {
    const s = setup(1000);
    await s.wallet.read();
    s.wallet.noteInsufficientBalance();
    expect(s.wallet.peek()).toMatchObject({ balanceSats: 5000, low: true });
    expect(await s.wallet.read()).toMatchObject({ low: true });
    expect(s.payments.wallet).toHaveBeenCalledTimes(1);
    expect(s.events('warn')).toEqual(['wallet_low']);
    // The next check a minute later, after a top-up, clears it.
    s.tick(60_000);
    expect(await s.wallet.read()).toMatchObject({ balanceSats: 5000, low: false });
  });

  it('keeps a refusal noted while a check is under way: that answer is older than the refusal', async () => {
    const s = setup(1000);
    let answer!: (o: Outcome<number>) => void;
    s.payments.wallet.mockImplementationOnce(() => new Promise((r) => (answer = r)));
    const reading = s.wallet.read();
    s.tick(10);
    s.wallet.noteInsufficientBalance();
    answer({ kind: 'ok', data: 5000 });
    expect(await reading).toMatchObject({ balanceSats: 5000, low: true });
  });

  it('keeps the last good reading when a check fails, says why, and does not ask again for a minute', async () => {
    const s = setup();
    const first = await s.wallet.read();
    s.answer({ kind: 'unavailable', reason: 'ECONNREFUSED' });
    s.tick(60_000);
    expect(await s.wallet.read()).toEqual({ ...first, error: 'ECONNREFUSED' });
    s.answer({ kind: 'refused', status: 401, message: 'Invalid API key provided' });
    s.tick(30_000);
    await s.wallet.read();
    expect(s.payments.wallet).toHaveBeenCalledTimes(2);
    s.tick(30_000);
    expect((await s.wallet.read()).error).toBe('refused_401');
    // A refused key is said by the payments client itself (service_refused_key), not twice.
    expect(s.events('warn')).toEqual(['wallet_check_failed']);
    s.answer({ kind: 'ok', data: 7000 });
    s.tick(60_000);
    expect(await s.wallet.read()).toEqual({ balanceSats: 7000, checkedAt: s.now(), low: false });
  });

  it('a client that throws counts as a failed check, not a crash', async () => {
    const s = setup();
    s.payments.wallet.mockRejectedValueOnce(new Error('boom'));
    expect(await s.wallet.read()).toEqual({ balanceSats: undefined, checkedAt: undefined, low: false, error: 'boom' });
  });
});
