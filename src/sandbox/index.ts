export { createSandbox, type RampSessionRecord, type Sandbox, type SandboxOptions } from './sandbox.js';
export { TEST_GAMERTAGS } from './test-gamertags.js';
export type { SandboxPayment } from './wallet.js';
export { SEEDED_WITHDRAWAL_REQUEST_IDS } from './withdrawal-requests.js';
