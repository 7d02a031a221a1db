// Package mail delivers the identity service's mail: over SMTP when SMTP_URL is set, or as
// one file per message under DATA_DIR/mail/ otherwise (decisions.md). Both log only where a
// message went, never its recipient or text: the text holds a sign-in link.
package mail

import (
	"bytes"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/identity/internal/usecase"
)

// render builds the RFC 5322 form of m with CRLF line ends. Subject and addresses come from
// this service, never from a customer's free text, so they need no encoding beyond ASCII.
func render(from string, m usecase.Mail, now time.Time) []byte {
	var b bytes.Buffer
	domain := "tori.localhost"
	if a, err := mail.ParseAddress(from); err == nil {
		if at := strings.LastIndexByte(a.Address, '@'); at >= 0 {
			domain = a.Address[at+1:]
		}
	}
	fmt.Fprintf(&b, "From: %s\r\n", from)
	fmt.Fprintf(&b, "To: %s\r\n", m.To)
	fmt.Fprintf(&b, "Subject: %s\r\n", m.Subject)
	fmt.Fprintf(&b, "Date: %s\r\n", now.Format(time.RFC1123Z))
	fmt.Fprintf(&b, "Message-ID: <%s@%s>\r\n", uuid.NewString(), domain)
	b.WriteString("MIME-Version: 1.0\r\n")
	b.WriteString("Content-Type: text/plain; charset=utf-8\r\n")
	b.WriteString("Content-Transfer-Encoding: 8bit\r\n\r\n")
	for _, line := range strings.Split(strings.ReplaceAll(m.Text, "\r\n", "\n"), "\n") {
		// SMTP's DATA ends at a line holding only a dot; net/smtp's writer escapes leading
		// dots, and a file needs none, so the text goes as it is.
		b.WriteString(line)
		b.WriteString("\r\n")
	}
	return b.Bytes()
}

var (
	_ usecase.Mailer = FileSender{}
	_ usecase.Mailer = SMTPSender{}
)
