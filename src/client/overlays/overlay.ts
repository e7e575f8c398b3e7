/** A modal layer above the game, in plain DOM: closes on its button, Escape, or a click outside. */
export function createOverlay(label: string, onClose: () => void) {
  const backdrop = document.createElement('div');
  backdrop.setAttribute('role', 'dialog');
  backdrop.setAttribute('aria-label', label);
  backdrop.dataset.rewardbus = 'overlay';
  backdrop.style.cssText = 'position:fixed;inset:0;z-index:2147483000;background:rgba(8,10,16,.72);display:grid;place-items:center;font-family:system-ui,sans-serif';
  const panel = document.createElement('div');
  panel.style.cssText = 'position:relative;background:#fff;color:#111;border-radius:14px;box-shadow:0 20px 60px rgba(0,0,0,.5);overflow:hidden;max-width:94vw;max-height:94vh';
  const close = document.createElement('button');
  close.textContent = '×';
  close.setAttribute('aria-label', 'Close');
  close.style.cssText = 'position:absolute;top:6px;right:8px;border:0;background:none;font-size:26px;cursor:pointer;color:#555;z-index:1';
  panel.append(close);
  backdrop.append(panel);

  let open = true;
  const onKey = (e: KeyboardEvent) => e.key === 'Escape' && dismiss();
  function dismiss() {
    if (!open) return;
    open = false;
    backdrop.remove();
    document.removeEventListener('keydown', onKey);
    onClose();
  }
  close.onclick = dismiss;
  backdrop.onclick = (e) => e.target === backdrop && dismiss();
  document.addEventListener('keydown', onKey);
  document.body.append(backdrop);
  const remove = () => {
    open = false;
    backdrop.remove();
    document.removeEventListener('keydown', onKey);
  };
  return { panel, dismiss, remove };
}
