import type { RewardRecord } from 'rewardbus';
import type { RewardBusPlugin } from 'rewardbus/phaser';

const $ = (id: string) => document.getElementById(id)!;

/** The page's side panel: who is playing, whether the relay is reachable, and the reward history. */
export function showPanel(rewards: RewardBusPlugin) {
  const bus = rewards.bus;
  const titles = new Map<string, string>();
  let history: RewardRecord[] = [];

  // Buy sats through the service's widget; claim earnings as a withdrawal request (sandbox:
  // the demo makes one through the sandbox's test controls, as a game's backend would make one).
  const buy = $('buy') as HTMLButtonElement;
  const claim = $('claim') as HTMLButtonElement;
  buy.onclick = () => void rewards.openRamp({ email: `${bus.player?.gamertag ?? 'player'}@example.com` }).catch((e: Error) => alert(e.message));
  claim.onclick = async () => {
    const earned = history.filter((r) => r.status === 'paid').reduce((s, r) => s + r.sats, 0);
    const res = await fetch('/sandbox/_sandbox/withdrawal-requests', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amountSats: Math.max(earned, 10), description: `Coin Rush winnings of ${bus.player?.gamertag}` }),
    });
    const { data } = (await res.json()) as { data: { id: string } };
    await rewards.showWithdrawal(data.id);
  };

  function render() {
    buy.disabled = claim.disabled = !bus.player;
    $('status').textContent = bus.online ? 'online' : 'offline';
    $('status').classList.toggle('offline', !bus.online);
    $('player').textContent = bus.player ? `Playing as ${bus.player.gamertag}` : 'not linked';
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
        .map((r) => ({ title: titles.get(r.achievementId) ?? r.achievementId, sats: `${r.sats} sats`, status: r.status.replace('_', ' ') })),
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

  async function refresh() {
    if (bus.player) history = await bus.history();
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
  for (const e of ['reward:paid', 'reward:rejected', 'reward:failed', 'reward:review', 'reward:held', 'player:linked', 'ramp:completed'] as const) bus.on(e, () => void refresh());
  window.addEventListener('offline', render);
  render();
}
