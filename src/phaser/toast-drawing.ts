import type * as Phaser from 'phaser';
import type { Toast, ToastObject, ToastStack, ToastVariant } from './toast-types.js';

const COLORS: Record<ToastVariant, number> = {
  queued: 0x44506a,
  paid: 0x1f8a4c,
  credited: 0x1f8a4c,
  rejected: 0xb26b00,
  failed: 0xa8322d,
  review: 0x7a5fb0,
  held: 0x7a5fb0,
  waiting: 0x44506a,
  info: 0x2d5fa8,
};

/**
 * Draws a toast on the toast scene's stack, fades it in, and out after its time. Loaded with
 * the first toast: a game that has nothing to say yet does not pay for it.
 */
export function drawToast(scene: Phaser.Scene, stack: ToastStack, toast: Toast) {
  const o = stack.options;
  const width = stack.width();
  const item: ToastObject = o.render ? o.render(scene, toast, width) : draw(scene, stack, toast, width);
  const remove = (gone: ToastObject) => {
    const i = stack.live.indexOf(gone);
    if (i < 0) return;
    stack.live.splice(i, 1);
    gone.destroy();
    layout(scene, stack);
  };
  stack.live.push(item);
  // Older ones leave early: past `max`, or past the game's edge (a small game, toasts of a few lines).
  const tall = () => stack.live.reduce((h, t) => h + (t.height ?? 40) + stack.gap, stack.margin) > scene.scale.height - stack.margin + stack.gap;
  while (stack.live.length > (o.max ?? 4) || (stack.live.length > 1 && tall())) remove(stack.live[0]!);
  layout(scene, stack);
  item.setAlpha?.(0);
  scene.tweens.add({ targets: item, alpha: 1, duration: 150 });
  scene.time.delayedCall(o.durationMs ?? 3500, () => scene.tweens.add({ targets: item, alpha: 0, duration: 250, onComplete: () => remove(item) }));
  scene.scene.bringToTop();
}

function draw(scene: Phaser.Scene, stack: ToastStack, toast: Toast, width: number) {
  const o = stack.options;
  const text = scene.add.text(12, 10, toast.text, {
    fontFamily: o.fontFamily ?? 'system-ui, sans-serif',
    fontSize: `${o.fontSize ?? 16}px`,
    color: '#ffffff',
    // Advanced wrap also breaks a word longer than the box (a long gamertag).
    wordWrap: { width: width - 24, useAdvancedWrap: true },
  });
  const height = text.height + 20;
  const bg = scene.add.graphics();
  bg.fillStyle(o.colors?.[toast.variant] ?? COLORS[toast.variant], 0.95);
  bg.fillRoundedRect(0, 0, width, height, 10);
  const box = scene.add.container(0, 0, [bg, text]);
  box.setSize(width, height);
  box.setName(`toast-${toast.variant}`);
  return box;
}

/** Newest nearest the edge; again when the game is resized. */
export function layout(scene: Phaser.Scene, stack: ToastStack) {
  const { margin, gap } = stack;
  const bottom = (stack.options.position ?? 'top-right').startsWith('bottom');
  const x = stack.x(stack.width());
  let y = bottom ? scene.scale.height - margin : margin;
  for (const item of [...stack.live].reverse()) {
    const h = item.height ?? 40;
    item.setPosition(x, bottom ? (y -= h) : y);
    y = bottom ? y - gap : y + h + gap;
  }
}
