import type { Schemas } from '../api/types'

const day = (s: string) => new Date(s).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' })

// HoldBanner says what an unpaid invoice does, and when, in the hold's own dates.
export function HoldBanner({ hold }: { hold: NonNullable<Schemas['Hold']> }) {
  return (
    <div class="banner" role="alert">
      <strong>A payment failed on {day(hold.since)}.</strong> New deploys are refused from {day(hold.deploysRefusedFrom)};
      your sites stop serving from {day(hold.servingStopsFrom)}; artifacts may be reclaimed from {day(hold.reclaimableFrom)}.
      Paying the invoice undoes every step at once. <a href="/account#billing">Billing</a>
    </div>
  )
}
