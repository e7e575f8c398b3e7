import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteLedger } from '../../src/relay/index.js';
import { ledgerContract } from './ledger-contract.js';

ledgerContract('SQLite', async () => openSqliteLedger(join(mkdtempSync(join(tmpdir(), 'rewardbus-ledger-')), 'ledger.sqlite')));
