import type { RewardBus } from '../bus.js';
import { createOverlay } from './overlay.js';

/**
 * Shows a withdrawal request as a QR code of its `lightning:` URI, with its amount and expiry,
 * so the player can claim the sats with a wallet. The QR encoder is loaded only now.
 * Resolves with a function that closes it. Browsers only.
 */
export async function showWithdrawal(bus: RewardBus, id: string): Promise<() => void> {
  const [w, { default: qrcode }] = await Promise.all([bus.withdrawal(id), import('qrcode-generator')]);
  const qr = qrcode(0, 'M');
  qr.addData(w.uri.toUpperCase(), 'Alphanumeric');
  qr.make();
  const overlay = createOverlay('Claim sats', () => undefined);
  const box = document.createElement('div');
  box.dataset.rewardbus = 'withdrawal';
  box.style.cssText = 'padding:28px 28px 20px;text-align:center;width:300px';
  const expires = new Date(w.expiresAt);
  box.innerHTML = `<h2 style="margin:0 0 4px;font-size:22px"></h2><div data-role="status" style="color:#666;font-size:14px"></div>
    <div data-role="qr" style="margin:14px auto;width:240px;height:240px"></div>
    <a data-role="open" style="display:inline-block;padding:10px 16px;border-radius:8px;background:#f7931a;color:#111;font-weight:600;text-decoration:none">Open in wallet</a>
    <p data-role="lnurl" style="font:11px monospace;word-break:break-all;color:#777"></p>`;
  box.querySelector('h2')!.textContent = `${w.amountSats.toLocaleString()} sats`;
  box.querySelector('[data-role=status]')!.textContent = w.status === 'pending' ? `Scan to claim · expires ${expires.toLocaleString()}` : `This request is ${w.status}`;
  box.querySelector('[data-role=qr]')!.innerHTML = qr.createSvgTag({ cellSize: 4, margin: 2, scalable: true });
  (box.querySelector('[data-role=open]') as HTMLAnchorElement).href = w.uri;
  box.querySelector('[data-role=lnurl]')!.textContent = w.lnurl;
  overlay.panel.append(box);
  return overlay.dismiss;
}
