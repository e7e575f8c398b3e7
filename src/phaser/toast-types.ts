import type * as Phaser from 'phaser';

// What a toast is, and the stack the scene keeps them in: shared by the scene (toast-scene.ts) and
// the drawing it loads with the first toast (toast-drawing.ts), so neither imports the other.

/** `held`: waiting for an operator's approval; `waiting`: for the player's play time, or a guest's gamertag; `credited`: to the balance (balance mode). */
export type ToastVariant = 'queued' | 'paid' | 'credited' | 'rejected' | 'failed' | 'review' | 'held' | 'waiting' | 'info';

/** What a toast says; a custom renderer draws it its own way. */
export interface Toast {
  variant: ToastVariant;
  /** One line, ready to show: "+21 sats · First coin". */
  text: string;
  sats: number;
  gamertag: string;
  achievementId?: string;
  reason?: string;
}

export interface ToastOptions {
  position?: 'top-right' | 'top-left' | 'bottom-right' | 'bottom-left' | 'top-center';
  /** How long each toast stays, ms. Default 3500. */
  durationMs?: number;
  /** Most toasts on screen at once; older ones leave early (sooner where they would pass the game's edge). Default 4. */
  max?: number;
  fontFamily?: string;
  fontSize?: number;
  /** Background color per variant (0xRRGGBB). */
  colors?: Partial<Record<ToastVariant, number>>;
  /** Say a reward's dollar value beside its sats ("+77 sats ($0.05)"), when the relay recorded one (a catalog priced in dollars). Default false. */
  showUsd?: boolean;
  /** Draw a toast yourself: return a game object about `width` wide, origin at its top-left. */
  render?: (scene: Phaser.Scene, toast: Toast, width: number) => Phaser.GameObjects.GameObject & Phaser.GameObjects.Components.Transform;
}

export type ToastObject = Phaser.GameObjects.GameObject & Phaser.GameObjects.Components.Transform & { height?: number; setAlpha?: (a: number) => unknown };
/** The scene's stack of toasts, shared with their drawing (toast-drawing.ts, loaded with the first toast). */
export interface ToastStack {
  options: ToastOptions;
  readonly live: ToastObject[];
  readonly margin: number;
  readonly gap: number;
  width(): number;
  /** Where a toast `width` wide starts, for the configured position. */
  x(width: number): number;
}

/** The bus events the plugin's toasts say (the plugin leaves out other tabs' outcomes and online unlocks). */
export const TOAST_EVENTS = [
  'reward:paid',
  'reward:credited',
  'balance:changed',
  'withdrawal:paid',
  'withdrawal:failed',
  'withdrawal:review',
  'reward:rejected',
  'reward:failed',
  'reward:review',
  'reward:held',
  'reward:waiting',
  'reward:queued',
  'ramp:completed',
  'ramp:failed',
  'relay:offline',
] as const;
export type ToastEvent = (typeof TOAST_EVENTS)[number];
