/** FNV-1a, 32 bits, as 8 hex digits: a cheap change detector for text the controller itself wrote (not security). */
export function changeHash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}
