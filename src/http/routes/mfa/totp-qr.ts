import QRCode from 'qrcode';

/**
 * The otpauth URI as a QR code in SVG, for an admin page to show as it is (an <img> with a data:
 * URL, or inline): error correction M, the standard quiet zone of 4 modules. It encodes the same
 * secret as `otpauth_uri`, so the answer stays no-store.
 */
export function totpQrSvg(otpauthUri: string): Promise<string> {
  return QRCode.toString(otpauthUri, { type: 'svg', errorCorrectionLevel: 'M', margin: 4 });
}
