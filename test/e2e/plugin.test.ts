import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { demoBuild } from '../../esbuild.config.mjs';
import { type RunningServer, startServer } from '../../src/node/start-server.js';
import type { RewardBusPlugin } from '../../src/phaser/index.js';
import { capturedLogger, describeInBrowser, launchChromium, testConfig, watchPageErrors } from './harness.js';

let server: RunningServer;
let browser: Browser;

type PageWindow = typeof globalThis & {
  game: {
    scene: { isActive(key: string): boolean; start(key: string): void; getScene(key: string): unknown };
    scale: { width: number; height: number; resize(width: number, height: number): void; listenerCount(event: string): number };
    plugins: { stop(key: string): void; start(key: string): unknown };
    loop: { frame: number };
    destroy(removeCanvas: boolean): void;
  };
  destroyed?: RewardBusPlugin;
  topScene(): string | undefined;
  rewardsOf(key: string): unknown;
  plugin(): RewardBusPlugin | null;
  TOAST_SCENE_KEY: string;
};

describeInBrowser('the Phaser plugin in a real browser', () => {
  beforeAll(async () => {
    const bundle = await build({ ...demoBuild, entryPoints: ['test/e2e/fixtures/plugin-page.ts'], minify: false });
    const js = bundle.outputFiles![0]!.text;
    const html = '<!doctype html><body><script type="module" src="/page.js"></script></body>';
    server = await startServer(testConfig(), {
      logger: capturedLogger().logger,
      fallback: (req) => {
        const path = new URL(req.url).pathname;
        if (path === '/') return new Response(html, { headers: { 'content-type': 'text/html' } });
        if (path === '/page.js') return new Response(js, { headers: { 'content-type': 'text/javascript' } });
        return undefined;
      },
    });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  async function open(query = ''): Promise<Page> {
    const page = await browser.newPage();
    await page.goto(`${server.url}/${query}`);
    await page.waitForFunction(() => (globalThis as PageWindow).game?.scene.isActive('one'));
    return page;
  }

  it('maps this.rewards in every scene and keeps its toasts above them', async () => {
    const page = await open();
    const errors = watchPageErrors(page);
    expect(
      await page.evaluate(() => {
        const w = globalThis as PageWindow;
        return w.rewardsOf('one') === w.plugin() && w.rewardsOf('two') === w.plugin();
      }),
    ).toBe(true);
    await page.waitForFunction(() => (globalThis as PageWindow).topScene() === (globalThis as PageWindow).TOAST_SCENE_KEY);
    // A scene started later renders above the toasts for at most a frame.
    // Braces here and below: start() returns the scene manager, the plugin, which Playwright would copy back, the game with them.
    await page.evaluate(() => {
      (globalThis as PageWindow).game.scene.start('two');
    });
    await page.waitForFunction(() => (globalThis as PageWindow).game.scene.isActive('two'));
    await page.waitForFunction(() => (globalThis as PageWindow).topScene() === (globalThis as PageWindow).TOAST_SCENE_KEY);

    // Through the plugin, the bus pays: the bus's own methods, on this.rewards.
    const seen = await page.evaluate(async () => {
      const rewards = (globalThis as PageWindow).plugin()!;
      await rewards.link('phaserfan');
      const catalog = (await rewards.catalog()).map((c) => c.id);
      let pending = -1;
      await new Promise<void>((resolve) => {
        rewards.on('reward:paid', () => resolve());
        rewards.unlock('first-coin');
        pending = rewards.pending().length;
      });
      await rewards.flush();
      return { catalog, pending, player: rewards.player?.gamertag, history: (await rewards.history()).map((r) => r.achievementId) };
    });
    expect(seen).toMatchObject({ pending: 1, player: 'phaserfan', history: ['first-coin'] });
    expect(seen.catalog).toContain('first-coin');
    expect(server.sandbox!.payments().filter((p) => p.gamertag === 'phaserfan')).toHaveLength(1);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('cleans up on stop: its bus stops, its listeners and toast scene go, and it starts again', async () => {
    const page = await open();
    const errors = watchPageErrors(page);
    const after = await page.evaluate(() => {
      const w = globalThis as PageWindow;
      const plugin = w.plugin()!;
      const bus = plugin.bus;
      const before = bus.eventNames().length;
      w.game.plugins.stop('rewards');
      const thrown = (fn: () => unknown) => {
        try {
          fn();
          return undefined;
        } catch (err) {
          return (err as Error).message;
        }
      };
      return {
        before,
        listenersAfter: bus.eventNames().length,
        busGone: thrown(() => plugin.bus),
        unlockAfter: thrown(() => plugin.unlock('first-coin')),
        toastScene: w.game.scene.getScene(w.TOAST_SCENE_KEY) !== null,
      };
    });
    expect(after.before).toBeGreaterThan(0);
    expect(after).toMatchObject({ listenersAfter: 0, busGone: 'RewardBusPlugin is not started', unlockAfter: 'RewardBusPlugin is not started', toastScene: false });

    await page.evaluate(() => {
      (globalThis as PageWindow).game.plugins.start('rewards');
    });
    await page.waitForFunction(() => (globalThis as PageWindow).topScene() === (globalThis as PageWindow).TOAST_SCENE_KEY);
    expect(await page.evaluate(() => (globalThis as PageWindow).plugin()!.bus.eventNames().length)).toBeGreaterThan(0);

    // Stopped and started in one frame, from a scene (its update, a click): the old toast scene's
    // removal waited for the scene manager's next update, the new one was added before it, and
    // Phaser threw on the duplicate key from the game loop, which stopped.
    await page.evaluate(() => {
      const one = (globalThis as PageWindow).game.scene.getScene('one') as { events: { once(e: string, fn: () => void): void }; plugins: PageWindow['game']['plugins'] };
      one.events.once('update', () => {
        one.plugins.stop('rewards');
        one.plugins.start('rewards');
      });
    });
    await page.waitForFunction(() => (globalThis as PageWindow).game.scene.isActive('__rewardbus_toasts') && (globalThis as PageWindow).game.loop.frame > 0);
    const frame = await page.evaluate(() => (globalThis as PageWindow).game.loop.frame);
    await page.waitForFunction((then) => (globalThis as PageWindow).game.loop.frame > then + 5, frame, { timeout: 5_000 });
    await page.waitForFunction(() => (globalThis as PageWindow).topScene() === (globalThis as PageWindow).TOAST_SCENE_KEY);
    expect(errors).toEqual([]);
    await page.close();
  });

  // A game resized (Scale.RESIZE mode, a phone turned, game.scale.resize()): the badge stayed where
  // the first size put it, in mid-screen when the game grew and off it (its Withdraw button too)
  // when it shrank, until the next balance; the toasts stayed put until the next toast.
  it('keeps its balance badge and toasts in their corner when the game is resized', async () => {
    const page = await open('?balance');
    const errors = watchPageErrors(page);
    await page.waitForFunction(() => (globalThis as PageWindow).game.scene.isActive('__rewardbus_balance'));
    await page.evaluate(() => {
      const rewards = (globalThis as PageWindow).plugin()!;
      rewards.bus.emit('balance:changed', { sats: 52, withdrawableSats: 52, minWithdrawalSats: 20, withdrawnTodaySats: 0, resetsAt: new Date().toISOString() });
      rewards.toast({ variant: 'info', text: 'Welcome back', sats: 0, gamertag: '' });
    });
    type Drawn = { x: number; y: number; width: number; height: number };
    const corners = () =>
      page.evaluate(() => {
        const { game, TOAST_SCENE_KEY } = globalThis as PageWindow;
        const badge = game.scene.getScene('__rewardbus_balance') as { text: string; button: Drawn };
        const toast = (game.scene.getScene(TOAST_SCENE_KEY) as { children: { list: Drawn[] } }).children.list[0];
        const { width, height } = game.scale;
        return {
          badge: badge.text,
          // How far the Withdraw button and the toast are from the right edge (and the button from the bottom).
          button: [width - badge.button.x - badge.button.width, height - badge.button.y - badge.button.height].map(Math.round),
          toast: toast && Math.round(width - toast.x - toast.width),
        };
      });
    await expect.poll(corners).toEqual({ badge: '52 sats', button: [20, 18], toast: 12 });
    for (const [width, height] of [
      [600, 450],
      [360, 240],
    ]) {
      // resize() returns the scale manager.
      await page.evaluate(
        ([w, h]) => {
          (globalThis as PageWindow).game.scale.resize(w!, h!);
        },
        [width, height],
      );
      await expect.poll(corners).toEqual({ badge: '52 sats', button: [20, 18], toast: 12 });
    }
    // Stopped, the plugin's scenes no longer hear the scale manager, which stays with the game:
    // its listeners are as many after a second stop as after the first.
    const stopped = () =>
      page.evaluate(() => {
        const { game } = globalThis as PageWindow;
        game.plugins.stop('rewards');
        return game.scale.listenerCount('resize');
      });
    const once = await stopped();
    await page.evaluate(() => {
      (globalThis as PageWindow).game.plugins.start('rewards');
    });
    await page.waitForFunction(() => ['__rewardbus_toasts', '__rewardbus_balance'].every((key) => (globalThis as PageWindow).game.scene.isActive(key)));
    expect(await stopped()).toBe(once);
    await page.evaluate(() => {
      (globalThis as PageWindow).game.scale.resize(400, 300);
    });
    expect(errors).toEqual([]);
    await page.close();
  });

  // Toasts of a few lines (a long achievement title, a long gamertag) in a small game: the oldest
  // of `max` were laid out below the game's bottom edge, shown to no one.
  it('keeps every toast it shows inside the game; older ones leave early', async () => {
    const page = await open('?balance');
    const errors = watchPageErrors(page);
    await page.evaluate(() => {
      for (let i = 1; i <= 4; i++) {
        const text = `+${i} sats · The first time you cleared every level without losing a single life → a_rather_long_gamertag`;
        (globalThis as PageWindow).plugin()!.toast({ variant: 'paid', text, sats: i, gamertag: '' });
      }
    });
    const drawn = () =>
      page.evaluate(() => {
        const { game, TOAST_SCENE_KEY } = globalThis as PageWindow;
        const scene = game.scene.getScene(TOAST_SCENE_KEY) as { recent: unknown[]; children: { list: Array<{ y: number; height: number }> } };
        return { recent: scene.recent.length, bottoms: scene.children.list.map((t) => t.y + t.height), height: game.scale.height };
      });
    // The four are drawn together, once the drawing's chunk has come.
    await expect.poll(async () => (await drawn()).bottoms.length).toBeGreaterThan(0);
    const { recent, bottoms, height } = await drawn();
    expect(recent).toBe(4);
    expect(bottoms.filter((bottom) => bottom > height - 12)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  // game.destroy(true): Phaser destroys the scenes, then the plugins; the plugin's stop removed its
  // toast scene from a scene manager already destroyed, threw, and left the bus running and the canvas on the page.
  // Then Phaser nulls the plugin's `game`: a toast after it (a credit's, which waits for its balance) threw.
  it('stops its bus when the game is destroyed, and lets Phaser finish destroying the game', async () => {
    const page = await open();
    const errors = watchPageErrors(page);
    await page.evaluate(() => {
      const w = globalThis as PageWindow;
      w.destroyed = w.plugin()!;
      // A credit heard as the player leaves: its toast waits for the balance after it (up to 3 s).
      const intent = { id: 'k1', achievementId: 'first-coin', occurredAt: new Date().toISOString(), attempts: 1, nextAttemptAt: 0 };
      w.destroyed.bus.emit('reward:credited', { intent, sats: 21, gamertag: 'leaver', remote: false });
      w.game.destroy(true);
    });
    await expect
      .poll(() =>
        page.evaluate(() => {
          let bus = 'running';
          try {
            (globalThis as PageWindow).destroyed!.bus;
          } catch (err) {
            bus = (err as Error).message;
          }
          return { canvas: document.querySelector('canvas') !== null, bus };
        }),
      )
      .toEqual({ canvas: false, bus: 'RewardBusPlugin is not started' });
    // The credit's toast, and a game's own, come to a game that is gone: they are not shown, and nothing throws.
    await page.evaluate(() => (globalThis as PageWindow).destroyed!.toast({ variant: 'info', text: 'Bye', sats: 0, gamertag: '' }));
    expect(await page.evaluate(() => (globalThis as PageWindow).destroyed!.toastArea())).toBeUndefined();
    await page.waitForTimeout(3_200);
    expect(errors).toEqual([]);
    await page.close();
  });
});
