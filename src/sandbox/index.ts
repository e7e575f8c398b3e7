export { createSandbox, type Sandbox, type SandboxOptions, type RampSessionRecord } from './sandbox.js';
export { TEST_GAMERTAGS } from './test-gamertags.js';
export { SEEDED_WITHDRAWAL_REQUEST_IDS } from './withdrawal-requests.js';
export type { SandboxPayment } from './wallet.js';
