/** The demo's one font family and its colors, shared by the page and the game's texts. */
export const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
export const ORANGE = '#f7931a';
export const ORANGE_HOVER = '#ffad4d';
export const TEXT = '#e8ecf4';
export const MUTED = '#8793ad';

/** A Phaser text style in the demo's font. */
export const text = (fontSize: number, color = TEXT, extra: Phaser.Types.GameObjects.Text.TextStyle = {}): Phaser.Types.GameObjects.Text.TextStyle => ({
  fontFamily: FONT,
  fontSize: `${fontSize}px`,
  color,
  ...extra,
});
