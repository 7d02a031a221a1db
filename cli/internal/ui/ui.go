// Package ui decides what the terminal gets: colours and progress bars only on a terminal,
// never with NO_COLOR, plain lines when piped.
package ui

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// UI is one run's standard streams and what they can show.
type UI struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	// Color: stdout takes ANSI colours. Bars: stderr takes a redrawn progress bar.
	Color bool
	Bars  bool
	// InTerminal: a person can answer a prompt on stdin.
	InTerminal bool

	lines *bufio.Reader
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f any) bool {
	if file, ok := f.(*os.File); ok {
		return term.IsTerminal(int(file.Fd()))
	}
	return false
}

// New looks at the streams and the environment.
func New(in io.Reader, out, errw io.Writer, getenv func(string) string) *UI {
	plain := getenv("NO_COLOR") != "" || getenv("TERM") == "dumb"
	return &UI{
		In: in, Out: out, Err: errw,
		Color:      !plain && IsTerminal(out),
		Bars:       !plain && IsTerminal(errw),
		InTerminal: IsTerminal(in),
	}
}

const (
	Bold   = "1"
	Dim    = "2"
	Red    = "31"
	Green  = "32"
	Yellow = "33"
	Blue   = "34"
	Cyan   = "36"
)

// Paint wraps s in an SGR code when stdout takes colours.
func (u *UI) Paint(code, s string) string {
	if !u.Color {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// PaintErr is Paint for stderr, which is coloured when it is a terminal (Bars).
func (u *UI) PaintErr(code, s string) string {
	if !u.Bars {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// Println writes a line to stdout.
func (u *UI) Println(a ...any) { fmt.Fprintln(u.Out, a...) }

// Printf writes to stdout.
func (u *UI) Printf(format string, a ...any) { fmt.Fprintf(u.Out, format, a...) }

// Notef writes a line to stderr: what is said to the person, not the command's output.
func (u *UI) Notef(format string, a ...any) { fmt.Fprintf(u.Err, format+"\n", a...) }

// ReadLine reads one line from stdin, without its end.
func (u *UI) ReadLine() (string, error) {
	if u.lines == nil {
		u.lines = bufio.NewReader(u.In)
	}
	s, err := u.lines.ReadString('\n')
	if err != nil && s == "" {
		return "", err
	}
	return strings.TrimRight(s, "\r\n"), nil
}

// Bytes is a size for people.
func Bytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// Progress is an upload's bar on stderr; off a terminal it says what it sends, once.
type Progress struct {
	u     *UI
	label string
	total int64

	mu    sync.Mutex
	done  int64
	drawn time.Time
}

// NewProgress starts a bar for total bytes.
func (u *UI) NewProgress(label string, total int64) *Progress {
	p := &Progress{u: u, label: label, total: total}
	if !u.Bars {
		fmt.Fprintf(u.Err, "%s (%s)…\n", label, Bytes(total))
	}
	return p
}

// Reader counts what r gives as sent; a new reader (a retry) starts the count again.
func (p *Progress) Reader(r io.ReadCloser) io.ReadCloser {
	p.mu.Lock()
	p.done = 0
	p.mu.Unlock()
	return &counting{ReadCloser: r, p: p}
}

type counting struct {
	io.ReadCloser
	p *Progress
}

func (c *counting) Read(b []byte) (int, error) {
	n, err := c.ReadCloser.Read(b)
	c.p.add(int64(n))
	return n, err
}

func (p *Progress) add(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += n
	if !p.u.Bars {
		return
	}
	if time.Since(p.drawn) < 80*time.Millisecond && p.done < p.total {
		return
	}
	p.drawn = time.Now()
	p.draw()
}

func (p *Progress) draw() {
	const width = 30
	frac := 1.0
	if p.total > 0 {
		frac = float64(p.done) / float64(p.total)
	}
	if frac > 1 {
		frac = 1
	}
	full := int(frac * width)
	bar := strings.Repeat("█", full) + strings.Repeat("░", width-full)
	fmt.Fprintf(p.u.Err, "\r\x1b[K%s \x1b[36m%s\x1b[0m %3d%%  %s / %s", p.label, bar, int(frac*100), Bytes(p.done), Bytes(p.total))
}

// Done ends the bar's line.
func (p *Progress) Done() {
	if !p.u.Bars {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = p.total
	p.draw()
	fmt.Fprintln(p.u.Err)
}
