// Jupyter counts cursor positions in Unicode code points (protocol 5.2+); JavaScript strings and
// TypeScript count UTF-16 code units. The two differ after any character outside the BMP (emoji).

/** UTF-16 offset of code point `cursor` in `text` (clamped to the text). */
export function codePointToUtf16(text: string, cursor: number): number {
  let units = 0;
  let points = 0;
  while (points < cursor && units < text.length) {
    const c = text.codePointAt(units)!;
    units += c > 0xffff ? 2 : 1;
    points += 1;
  }
  return units;
}

/** Code point offset of UTF-16 offset `offset` in `text`. */
export function utf16ToCodePoint(text: string, offset: number): number {
  let points = 0;
  let units = 0;
  while (units < offset && units < text.length) {
    const c = text.codePointAt(units)!;
    units += c > 0xffff ? 2 : 1;
    points += 1;
  }
  return points;
}
