/** The sections of docs/configuration.md, in order: a title, and what holds for every setting in it. */
export const GROUPS = {
  service: { title: 'Where it listens, and the payments service' },
  ledger: { title: 'The ledger' },
  catalog: { title: 'Achievements and player tokens' },
  browsers: { title: 'Browsers and proxies' },
  limits: {
    title: 'Limits and defenses against bots',
    intro:
      'Each bot defense is off at `0` or empty; [threat-model.md](threat-model.md) says what each stops.\n' +
      'Every per-address setting counts an IPv6 client by its /64 and an address however it is spelled\n' +
      '([relay-api.md](relay-api.md#addresses)). Off Node (Bun, Deno, edge runtimes), the library\n' +
      "option `createRelay({ clientAddress(request, env) })` gives the relay the caller's address;\n" +
      'without one, requests pass the per-address limits and the relay warns (`client_address_unknown`).',
  },
  balance: {
    title: 'Balance mode: earn now, withdraw later',
    intro:
      "Off by default (each claim is paid at once). In balance mode a claim is credited to the player's balance, which the\n" +
      'player withdraws from later; guests earn before linking a gamertag ([balance.md](balance.md)).',
  },
  webhooks: { title: 'Webhooks from the payments service' },
  operator: { title: "The operator's side" },
} as const;
