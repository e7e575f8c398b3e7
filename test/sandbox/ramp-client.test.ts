import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/sandbox/index.js';

// ---------------------------------------------------------------------------------------------
// Declared types of the official ramp widget client, copied from zbdpay/ramp-ts src/types.ts,
// version 1.1.9 (commit b064cb1b02281dbde50f3786793940b31bd9b878). Only `environment`, which
// picks one of its hosts, is left out: this client is pointed at the sandbox instead.
enum QuoteCurrencyEnum {
  USD = 'USD',
}
enum BaseCurrencyEnum {
  BTC = 'BTC',
}
interface RampError {
  code: string;
  message: string;
  // biome-ignore lint/suspicious/noExplicitAny: as declared upstream
  details?: any;
}
type InitRampSessionConfig = {
  apikey: string;
  destination: string;
  quote_currency: QuoteCurrencyEnum;
  base_currency: BaseCurrencyEnum;
  webhook_url?: string;
  reference_id?: string;
  // biome-ignore lint/suspicious/noExplicitAny: as declared upstream
  metadata?: Record<string, any>;
} & ({ email: string } | { access_token: string });
interface InitRampSessionData {
  session_token: string;
  expires_at: string;
  widget_url: string;
}
interface PlatformResponse<T> {
  data: T | null;
  error: RampError | null;
  success: boolean;
  message: string;
}
type InitRampSessionResponse = PlatformResponse<InitRampSessionData>;
// ---------------------------------------------------------------------------------------------

/**
 * `initRampSession` of zbdpay/ramp-ts src/session.ts 1.1.9, with a base URL for its environment:
 * the same body (optional fields only when given), and on a failed status the parsed JSON body
 * as the answer (its `handleFailedResponse` in src/utils.ts).
 */
async function initRampSession(baseUrl: string, config: InitRampSessionConfig): Promise<InitRampSessionResponse> {
  const { apikey, destination, quote_currency, base_currency, webhook_url, reference_id, metadata, ...authConfig } = config;
  const body: Record<string, unknown> = { destination, quote_currency, base_currency };
  if ('email' in authConfig) body.email = authConfig.email;
  else if ('access_token' in authConfig) body.access_token = authConfig.access_token;
  if (webhook_url) body.webhook_url = webhook_url;
  if (reference_id) body.reference_id = reference_id;
  if (metadata) body.metadata = metadata;
  const response = await fetch(`${baseUrl}/api/v1/ramp-widget`, {
    method: 'POST',
    headers: { apikey, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok) {
    const parsed: unknown = JSON.parse(await response.text());
    if (parsed && typeof parsed === 'object') return parsed as InitRampSessionResponse;
    throw new Error(`${response.status}: not an object`);
  }
  return (await response.json()) as InitRampSessionResponse;
}

let sandbox: Sandbox;
let server: ServerType;
let base: string;

beforeAll(async () => {
  sandbox = createSandbox({ apiKey: 'ramp-key' });
  server = serve({ fetch: sandbox.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const session = (overrides: Partial<InitRampSessionConfig> & ({ email: string } | { access_token: string })) =>
  initRampSession(base, {
    apikey: 'ramp-key',
    destination: 'player@zbd.gg',
    quote_currency: QuoteCurrencyEnum.USD,
    base_currency: BaseCurrencyEnum.BTC,
    ...overrides,
  } as InitRampSessionConfig);

/** Every field the client declares on a success: data set, error null. */
function expectSession(r: InitRampSessionResponse) {
  expect(r).toMatchObject({ success: true, error: null });
  expect(typeof r.message).toBe('string');
  const data = r.data!;
  expect([typeof data.session_token, typeof data.widget_url, typeof data.expires_at]).toEqual(['string', 'string', 'string']);
  expect(URL.canParse(data.widget_url)).toBe(true);
  const ttl = Date.parse(data.expires_at) - Date.now();
  expect(ttl).toBeGreaterThan(14 * 60_000);
  expect(ttl).toBeLessThanOrEqual(15 * 60_000);
  return data;
}

/** Every field the client declares on an error: data null, error with its code and a message the client can show. */
function expectError(r: InitRampSessionResponse, code: string) {
  expect(r).toMatchObject({ success: false, data: null, error: { code } });
  expect(Object.keys(r).sort()).toEqual(['data', 'error', 'message', 'success']);
  expect(typeof r.message).toBe('string');
  expect(r.error!.message).toEqual(expect.any(String));
  expect(r.error!.message.length).toBeGreaterThan(0);
}

const sessionFor = (widgetUrl: string) => sandbox.rampSessions.get(widgetUrl.split('/').pop()!)!;

describe("the sandbox's ramp sessions, through the official ramp client's declared types (@zbdpay/ramp-ts 1.1.9)", () => {
  it('makes a session from an e-mail with every optional input, and keeps them for its widget', async () => {
    const r = await session({ email: 'p@example.com', webhook_url: 'http://localhost/hook', reference_id: 'ref-1', metadata: { level: 3 } });
    expect(Object.keys(r).sort()).toEqual(['data', 'error', 'message', 'success']);
    const data = expectSession(r);
    expect(sessionFor(data.widget_url)).toMatchObject({
      email: 'p@example.com',
      webhookUrl: 'http://localhost/hook',
      referenceId: 'ref-1',
      destination: 'player@zbd.gg',
      quoteCurrency: 'USD',
      baseCurrency: 'BTC',
      metadata: { level: 3 },
    });
  });

  it('makes a session from an access token instead of an e-mail, and without a webhook_url', async () => {
    const data = expectSession(await session({ access_token: 'at_123' }));
    const kept = sessionFor(data.widget_url);
    expect(kept).toMatchObject({ accessToken: 'at_123' });
    expect(kept.email).toBeUndefined();
    expect(kept.webhookUrl).toBeUndefined();
    // Its widget still works; there is just nowhere to send the webhook.
    const done = await fetch(`${base}/widget/${kept.session_id}/complete`, { method: 'POST' });
    expect(await done.json()).toMatchObject({ webhookStatus: null });
  });

  it('answers a bad key in the ramp envelope: the client can read error.message', async () => {
    const r = await initRampSession(base, {
      apikey: 'wrong',
      email: 'p@example.com',
      destination: 'player@zbd.gg',
      quote_currency: QuoteCurrencyEnum.USD,
      base_currency: BaseCurrencyEnum.BTC,
    });
    expectError(r, 'INVALID_API_KEY');
    expect(r.error?.message).toBe('Invalid API key provided');
  });

  it('refuses bad inputs in the ramp envelope, each with its code', async () => {
    expectError(await session({ email: 'nope' }), 'INVALID_EMAIL');
    expectError(await session({ email: '' }), 'INVALID_EMAIL');
    expectError(await session({ access_token: '' }), 'INVALID_ACCESS_TOKEN');
    expectError(await session({ email: 'p@example.com', webhook_url: 'not a url' }), 'INVALID_WEBHOOK_URL');
    expectError(await session({ email: 'p@example.com', destination: 'two words' }), 'INVALID_DESTINATION');
    expectError(await session({ email: 'p@example.com', quote_currency: 'dollars' as QuoteCurrencyEnum }), 'INVALID_CURRENCY');
    expectError(await session({ email: 'p@example.com', base_currency: 'bitcoin' as BaseCurrencyEnum }), 'INVALID_CURRENCY');
  });

  it('refuses a body that is not JSON, and an unknown /api path, in the same envelope', async () => {
    const post = (path: string, body: string) => fetch(base + path, { method: 'POST', headers: { apikey: 'ramp-key', 'content-type': 'application/json' }, body });
    const notJson = await post('/api/v1/ramp-widget', '{');
    expect(notJson.status).toBe(400);
    expectError((await notJson.json()) as InitRampSessionResponse, 'INVALID_REQUEST');
    const unknown = await post('/api/v1/nothing-here', '{}');
    expect(unknown.status).toBe(404);
    expectError((await unknown.json()) as InitRampSessionResponse, 'NOT_FOUND');
  });
});
