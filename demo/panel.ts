import type { BalanceView, RewardRecord } from 'rewardbus';
import type { RewardBusPlugin } from 'rewardbus/phaser';

const $ = (id: string) => document.getElementById(id)!;
/** As many rewards as the relay's first page holds. */
const HISTORY_SHOWN = 100;

/** The page's side panel: who is playing, whether the relay is reachable, and the reward history. */
export function showPanel(rewards: RewardBusPlugin) {
  const bus = rewards.bus;
  const titles = new Map<string, string>();
  let history: RewardRecord[] = [];
  let balance: BalanceView | undefined;

  // Buy sats through the service's widget; claim earnings as a withdrawal request (sandbox:
  // the demo makes one through the sandbox's test controls, as a game's backend would make one).
  const buy = $('buy') as HTMLButtonElement;
  const claim = $('claim') as HTMLButtonElement;
  // Balance mode: the player earns as a guest, claims the sats with a gamertag, and withdraws.
  const balanceMode = () => bus.payoutMode === 'balance';
  const claimSats = $('claim-sats') as HTMLFormElement;
  claimSats.onsubmit = async (event) => {
    event.preventDefault();
    $('claim-error').textContent = '';
    const gamertag = ($('claim-gamertag') as HTMLInputElement).value.trim();
    try {
      const player = await rewards.link(gamertag);
      if (player.merge) rewards.toast({ variant: 'paid', text: `Claimed ${player.merge.movedSats} sats as ${gamertag}`, sats: player.merge.movedSats, gamertag });
    } catch (err) {
      $('claim-error').textContent = `Could not claim: ${(err as { code?: string }).code ?? err}`;
    }
  };
  buy.onclick = () => void rewards.openRamp({ email: `${bus.player?.gamertag ?? 'player'}@example.com` }).catch((e: Error) => alert(e.message));
  claim.onclick = async () => {
    // Balance mode: Claim withdraws all that is withdrawable, to the gamertag (the badge's Withdraw does the same).
    if (balanceMode()) return void rewards.withdraw().catch((e: { code?: string }) => ($('claim-error').textContent = `Cannot withdraw: ${e.code}`));
    const earned = history.filter((r) => r.status === 'paid').reduce((s, r) => s + r.sats, 0);
    const res = await fetch('/sandbox/_sandbox/withdrawal-requests', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amountSats: Math.max(earned, 10), description: `Coin Rush winnings of ${bus.player?.gamertag}` }),
    });
    const { data } = (await res.json()) as { data: { id: string } };
    await rewards.showWithdrawal(data.id);
  };

  // The player's referral link, once linked (a relay without a referral program answers 404: no link shown).
  let referralFor: string | undefined;
  async function showReferral() {
    const userId = bus.player && !bus.player.guest ? bus.player.userId : undefined;
    if (userId === referralFor) return;
    referralFor = userId;
    const code = userId ? await bus.referralCode().catch(() => undefined) : undefined;
    const url = new URL(location.href);
    url.search = code ? `?ref=${code}` : '';
    $('referral').textContent = code ? `Invite a friend: ${url.href}` : '';
  }

  // Drawn once a frame at most, whatever number of events came: never inside the game's unlock(),
  // whose reward:queued would otherwise wait for the whole list to be rebuilt before its send.
  let drawing = false;
  function render() {
    if (drawing) return;
    drawing = true;
    requestAnimationFrame(() => {
      drawing = false;
      draw();
    });
  }

  function draw() {
    void showReferral();
    const guest = !!bus.player?.guest;
    buy.disabled = claim.disabled = !bus.player || guest;
    claim.textContent = balanceMode() ? 'Withdraw' : 'Claim';
    $('status').textContent = bus.online ? 'online' : 'offline';
    $('status').classList.toggle('offline', !bus.online);
    $('player').textContent = guest ? 'Playing as a guest' : bus.player ? `Playing as ${bus.player.gamertag}` : 'not linked';
    $('balance-box').hidden = !balanceMode();
    claimSats.style.display = guest ? 'flex' : 'none';
    $('balance').textContent = balance ? `Balance ${balance.sats} sats · withdrawable ${balance.withdrawableSats} (from ${balance.minWithdrawalSats})` : '';
    const waiting = bus.pending();
    $('pending').textContent = waiting.length ? `${waiting.length} reward${waiting.length > 1 ? 's' : ''} waiting to be sent` : '';
    const rows = [
      ...waiting.map((i) => ({
        title: titles.get(i.achievementId) ?? i.achievementId,
        sats: '',
        status: !bus.online ? 'queued' : (i.notBefore ?? 0) > Date.now() ? 'waiting for play time' : 'pending',
      })),
      // A claim the relay deferred (sent before its play time) is in both: shown once, as the queue has it.
      ...history
        .filter((r) => !waiting.some((i) => i.id === r.idempotencyKey))
        .map((r) => ({
          title: r.kind === 'withdrawal' ? 'Withdrawal' : (titles.get(r.achievementId) ?? r.achievementId),
          sats: `${r.sats} sats`,
          status: r.status.replace('_', ' '),
        })),
    ];
    $('history').replaceChildren(
      ...rows.map((r) => {
        const li = document.createElement('li');
        li.className = r.status.split(' ')[0]!;
        li.innerHTML = `<span></span><span></span>`;
        li.children[0]!.textContent = r.title;
        li.children[1]!.textContent = `${r.sats} ${r.status}`.trim();
        return li;
      }),
    );
  }

  // The relay's page of history once (at start, at a link, after a withdrawal or a purchase);
  // then each outcome's own record takes its place in the list: no request per reward.
  async function refresh() {
    if (bus.player) history = await bus.history();
    render();
  }
  function heard(record: RewardRecord | undefined) {
    if (record && record.userId === bus.player?.userId) history = [record, ...history.filter((r) => r.id !== record.id)].slice(0, HISTORY_SHOWN);
    render();
  }

  void bus
    .catalog()
    .then(
      (c) => c.forEach((e) => titles.set(e.id, e.title)),
      () => undefined,
    )
    .then(refresh);
  for (const e of ['reward:queued', 'relay:offline', 'relay:online', 'reward:sent', 'reward:waiting'] as const) bus.on(e, render);
  for (const e of ['reward:paid', 'reward:credited', 'reward:rejected', 'reward:failed', 'reward:review', 'reward:held'] as const) bus.on(e, (o) => heard(o.record));
  for (const e of ['player:linked', 'ramp:completed', 'withdrawal:paid', 'withdrawal:failed', 'withdrawal:review'] as const) bus.on(e, () => void refresh());
  bus.on('balance:changed', (b) => {
    balance = b;
    render();
  });
  window.addEventListener('offline', render);
  render();
}
