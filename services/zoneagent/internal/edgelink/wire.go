// Package edgelink is how the zone's edge process and its runtime talk on one host: the
// link (the edge asks, over a Unix socket the runtime listens on, for exactly two things:
// "wake app X" (answered with the app's live web instances) and "a connection to instance
// Y", the connection passed back as a file
// descriptor) and the table feed (the runtime sends each routing-table change down a
// socket pair; the edge applies it and acks). Neither side trusts the other's bytes beyond
// these shapes: sizes are bounded, deadlines set, anything else refused.
package edgelink

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// The link's two requests; there is no third.
const (
	KindWake = "wake" // App (and Preview, for a preview's): the ids of its live web instances, woken if they nap
	KindDial = "dial" // Instance: a TCP connection to that instance, as a passed fd
)

// Bounds of the link's wire: one JSON line each way, one request per connection.
const (
	// maxLine bounds a request (and any line the runtime reads).
	maxLine = 1024
	// MaxWakeInstances bounds the instances one wake answers with (a plan's web quantity
	// stays far below it); the runtime answers the first ones, the edge refuses more.
	MaxWakeInstances = 64
	// maxInstanceID bounds one instance id (app/deploy/port: two UUIDs and a port are 79).
	maxInstanceID = 200
	// maxAnswerLine bounds an answer: a wake's full list of the longest ids fits.
	maxAnswerLine = maxLine + MaxWakeInstances*(maxInstanceID+3)
	// ioDeadline bounds reading a request and writing an answer; a wake itself may take
	// as long as a process's start (the asker's context bounds it).
	ioDeadline = 5 * time.Second
)

// Sentinel errors of the link, as the edge sees them.
var (
	// ErrGone: the instance is no longer running (the edge wakes the app again), or the
	// app is no longer live.
	ErrGone = errors.New("edgelink: gone")
	// ErrRefused: the runtime refused the request (its peer or its shape).
	ErrRefused = errors.New("edgelink: refused")
	// ErrLineTooLong: a peer sent more than a line's bound.
	ErrLineTooLong = errors.New("edgelink: line too long")
	// ErrNoWeb: the app's live revision runs no web instance (its formation has web at 0, or
	// it declares no web process); the edge answers 503 without asking again at once.
	ErrNoWeb = errors.New("edgelink: no web process")
)

// request is what the edge asks.
type request struct {
	Kind     string `json:"kind"`
	App      string `json:"app,omitempty"`
	Instance string `json:"instance,omitempty"`
	// Preview, on a wake only: the app's preview to wake (names.ValidPreviewID), not its
	// live revision.
	Preview string `json:"preview,omitempty"`
}

// answer is what the runtime says back: a wake's instances (or gone, or noWeb), a dial's
// instance with its connection riding along as SCM_RIGHTS.
type answer struct {
	Instance  string   `json:"instance,omitempty"`
	Instances []string `json:"instances,omitempty"`
	Gone      bool     `json:"gone,omitempty"`
	NoWeb     bool     `json:"noWeb,omitempty"`
	Error     string   `json:"error,omitempty"`
}

// validInstanceID says whether an id may travel on the link: not empty, bounded (so a
// wake's answer stays within its line).
func validInstanceID(id string) bool {
	return id != "" && len(id) <= maxInstanceID
}

// readLine reads one '\n'-ended line of at most limit bytes.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		line = append(line, frag...)
		if len(line) > limit {
			return nil, ErrLineTooLong
		}
		if err == nil {
			return line, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if errors.Is(err, io.EOF) && len(line) > 0 {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}

// decodeLine decodes one JSON line strictly (unknown fields refused).
func decodeLine(line []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", ErrRefused, err)
	}
	return nil
}
