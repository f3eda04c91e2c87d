export interface Cart { items: number; percent: number }

export function applyDiscount(cart: Cart): number {
  if (cart.percent === 0) {
    throw new RangeError(`discount of ${cart.percent}% leaves nothing to divide by`);
  }
  return (cart.items * 100) / cart.percent;
}
