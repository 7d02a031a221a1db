package usecase

import (
	"context"
	"fmt"
	"time"

	"tori.dev/contract/billinghold"
)

// HoldNotice is billing's word that an account's owner is to be told about its
// payment-failure hold (billing.account.hold_notice). Billing knows the hold; identity knows
// the owner's address, so identity writes the mail.
type HoldNotice struct {
	AccountID          string
	Notice             billinghold.Notice
	Since              time.Time
	DeploysRefusedFrom time.Time
	ServingStopsFrom   time.Time
}

// MailHoldNotice tells the account's owner what the hold means and by when to pay. An account
// identity does not know gets no mail; a mail server that refuses makes the error
// ErrMailUnavailable, so the bus delivers the notice again.
func (s *Service) MailHoldNotice(ctx context.Context, repo Repo, n HoldNotice) error {
	return s.mailOwner(ctx, repo, "hold", n.AccountID, func() (Mail, error) {
		const when = "2006-01-02 15:04 UTC"
		failed, refused, stops := n.Since.UTC().Format(when), n.DeploysRefusedFrom.UTC().Format(when), n.ServingStopsFrom.UTC().Format(when)
		pay := "Pay the open invoice from the billing page of the console, and everything goes back\nto normal at once.\n"
		var msg Mail
		switch n.Notice {
		case billinghold.NoticePaymentFailed:
			msg = Mail{Subject: "Tori: a payment failed",
				Text: fmt.Sprintf("The payment of your Tori subscription failed on %s.\n\n"+
					"Nothing changes yet. If the invoice is still unpaid, new deploys are refused from\n"+
					"%s (rollbacks still work), and your apps stop serving from %s.\nNothing is deleted.\n\n%s",
					failed, refused, stops, pay)}
		case billinghold.NoticeDeploysRefusedSoon:
			msg = Mail{Subject: "Tori: new deploys will be refused soon",
				Text: fmt.Sprintf("The invoice whose payment failed on %s is still unpaid.\n\n"+
					"From %s new deploys are refused (rollbacks still work), and from %s\nyour apps stop serving. Nothing is deleted.\n\n%s",
					failed, refused, stops, pay)}
		case billinghold.NoticeServingStopsSoon:
			msg = Mail{Subject: "Tori: your apps will stop serving soon",
				Text: fmt.Sprintf("The invoice whose payment failed on %s is still unpaid.\n\n"+
					"From %s every hostname of your apps stops serving. Nothing is deleted.\n\n%s",
					failed, stops, pay)}
		default:
			return Mail{}, fmt.Errorf("hold notice %q: unknown", n.Notice)
		}
		return msg, nil
	}, "notice", n.Notice)
}
