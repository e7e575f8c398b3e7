import type { RewardIntent } from '../events.js';

/**
 * The due intents as lanes of batches: a player's intents go in batches of at most `max`, one
 * after another, so a backlog goes in a few requests, and one device never has more than one
 * batch of a player's claims at the relay. Single claims (`max` 1: a relay without batches)
 * each get a lane, so they still go `concurrency` at a time. An intent unlocked before any
 * player is the current `player`'s from here on.
 */
export function lanesOf(due: RewardIntent[], player: { userId: string } | undefined, max: number): RewardIntent[][][] {
  const players = new Map<string, RewardIntent[][]>();
  for (const i of due) {
    const userId = (i.userId ??= player!.userId);
    const batches = players.get(userId) ?? players.set(userId, []).get(userId)!;
    const last = batches[batches.length - 1];
    if (last && last.length < max) last.push(i);
    else batches.push([i]);
  }
  return max > 1 ? [...players.values()] : [...players.values()].flat().map((b) => [b]);
}
