// walk recurses depth frames deep before it fails, so the stack holds every frame.
export function walk(depth: number): number {
  if (depth === 0) {
    throw new Error("the cart tree is deeper than its items");
  }
  return walk(depth - 1) + 1;
}
