// Package upload turns a deploy request's multipart stream into an artifact, part by part,
// without holding any file in memory: static sites become one tar object, source deploys
// keep their tarball as sent. On the way it reads the upload's root package.json, for the
// deploy's framework.
package upload

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"strings"
	"time"

	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/objects"
)

// Field names of the multipart payloads (decisions.md).
const (
	FieldFiles   = "files"
	FieldSource  = "source"
	FieldRelease = "release"
	// FieldClearCache ("true" or "false") on a source deploy asks the zone for a build from
	// an empty cache (issue 30).
	FieldClearCache = "clearCache"
)

// maxReleasePart bounds the release part of a source upload; it is a command line.
const maxReleasePart = 16 << 10

// Fields reads a part the payload itself does not know (a preview's name, ttlSeconds, env,
// database): handled false leaves the part to the payload's own rules.
type Fields func(field string, part io.Reader) (handled bool, err error)

// Static is StaticWith without extra fields.
func Static(body io.Reader, boundary string, w io.Writer) (int, PackageJSON, error) {
	return StaticWith(body, boundary, w, nil)
}

// StaticWith copies every `files` part of the multipart body into w as a tar archive whose entry
// names are the validated site-relative paths, and returns the site's root package.json. A
// part of another name means the payload is not a static site (kind_mismatch).
// Parts fields handles are read by it.
func StaticWith(body io.Reader, boundary string, w io.Writer, fields Fields) (files int, pkg PackageJSON, err error) {
	mr := multipart.NewReader(body, boundary)
	tw := tar.NewWriter(w)
	now := time.Unix(0, 0) // fixed mtimes: the same site makes the same artifact
	for {
		part, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return files, pkg, bodyError(err)
		}
		field, name, hasName := deploy.DispositionParams(part.Header.Get("Content-Disposition"))
		if handled, err := extra(fields, field, part); handled || err != nil {
			if err != nil {
				return files, pkg, err
			}
			continue
		}
		switch {
		case field == FieldSource || field == FieldRelease || field == FieldClearCache:
			return files, pkg, fmt.Errorf("%w: a static app takes `files` parts, not %q", deploy.ErrKindMismatch, field)
		case field != FieldFiles:
			return files, pkg, fmt.Errorf("%w: unexpected part %q", deploy.ErrInvalidBody, field)
		case !hasName:
			return files, pkg, fmt.Errorf("%w: a `files` part without a filename", deploy.ErrInvalidPath)
		}
		path, err := deploy.CleanPath(name)
		if err != nil {
			return files, pkg, err
		}
		var src io.Reader = part
		var pkgFile *capture
		if path == deploy.PackageJSONName {
			pkgFile = &capture{}
			src = io.TeeReader(part, pkgFile)
		}
		if err := copyEntry(tw, path, src, now); err != nil {
			return files, pkg, err
		}
		if pkgFile != nil {
			pkg = pkgFile.result()
		}
		files++
	}
	if files == 0 {
		return 0, pkg, deploy.ErrNoFiles
	}
	return files, pkg, tw.Close()
}

// copyEntry streams one part into the tar. A tar header needs the size up front, so the part
// goes through a spool: small parts in memory, larger ones in a temporary file.
func copyEntry(tw *tar.Writer, path string, part io.Reader, mtime time.Time) error {
	sp := newSpool()
	defer sp.Close()
	n, err := sp.copyFrom(part)
	if err != nil {
		return bodyError(err)
	}
	if err := tw.WriteHeader(&tar.Header{Name: path, Mode: 0o644, Size: n, ModTime: mtime, Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
		return err
	}
	r, err := sp.Reader()
	if err != nil {
		return err
	}
	_, err = io.Copy(tw, r)
	return err
}

// SourceParts is what a source deploy's body says besides the tarball.
type SourceParts struct {
	// Release is the optional release part, split on whitespace; ReleaseGiven says it came.
	Release      []string
	ReleaseGiven bool
	// ClearCache is the clearCache part: build from an empty cache.
	ClearCache bool
	// Package is the tarball's root package.json.
	Package PackageJSON
}

// Source is SourceWith without extra fields.
func Source(body io.Reader, boundary string, w io.Writer) (SourceParts, error) {
	return SourceWith(body, boundary, w, nil)
}

// SourceWith copies the `source` part into w and returns the other parts: the optional release
// part, split on whitespace, and clearCache, with the tarball's root package.json. A `files`
// part means a static payload (kind_mismatch). Parts fields handles are read by it.
func SourceWith(body io.Reader, boundary string, w io.Writer, fields Fields) (SourceParts, error) {
	var out SourceParts
	mr := multipart.NewReader(body, boundary)
	sawSource, sawClear := false, false
	for {
		part, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return SourceParts{}, bodyError(err)
		}
		field, _, _ := deploy.DispositionParams(part.Header.Get("Content-Disposition"))
		if handled, err := extra(fields, field, part); handled || err != nil {
			if err != nil {
				return SourceParts{}, err
			}
			continue
		}
		switch field {
		case FieldFiles:
			return SourceParts{}, fmt.Errorf("%w: a service app takes a `source` tarball, not `files`", deploy.ErrKindMismatch)
		case FieldSource:
			if sawSource {
				return SourceParts{}, fmt.Errorf("%w: more than one `source` part", deploy.ErrInvalidBody)
			}
			sawSource = true
			scan := newSourceScan()
			_, err := io.Copy(io.MultiWriter(w, scan), part)
			out.Package = scan.Finish()
			if err != nil {
				return SourceParts{}, bodyError(err)
			}
		case FieldRelease:
			b, err := io.ReadAll(io.LimitReader(part, maxReleasePart+1))
			if err != nil {
				return SourceParts{}, bodyError(err)
			}
			if len(b) > maxReleasePart {
				return SourceParts{}, fmt.Errorf("%w: longer than %d bytes", deploy.ErrInvalidRelease, maxReleasePart)
			}
			out.Release, err = deploy.SplitRelease(string(b))
			if err != nil {
				return SourceParts{}, err
			}
			out.ReleaseGiven = out.Release != nil
		case FieldClearCache:
			if sawClear {
				return SourceParts{}, fmt.Errorf("%w: more than one `clearCache` part", deploy.ErrInvalidBody)
			}
			sawClear = true
			if out.ClearCache, err = clearCachePart(part); err != nil {
				return SourceParts{}, err
			}
		default:
			return SourceParts{}, fmt.Errorf("%w: unexpected part %q", deploy.ErrInvalidBody, field)
		}
	}
	if !sawSource {
		return SourceParts{}, fmt.Errorf("%w: no `source` part", deploy.ErrInvalidBody)
	}
	return out, nil
}

// clearCachePart reads a clearCache part: "true" or "false", surrounding space aside.
func clearCachePart(part io.Reader) (bool, error) {
	b, err := io.ReadAll(io.LimitReader(part, 16))
	if err != nil {
		return false, bodyError(err)
	}
	switch strings.TrimSpace(string(b)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("%w: `clearCache` must be true or false", deploy.ErrInvalidBody)
}

// bodyError keeps the size-limit error as it is (it must become 413) and marks any other
// read failure as a malformed body.
func bodyError(err error) error {
	if errors.Is(err, objects.ErrTooLarge) {
		return err
	}
	msg := err.Error()
	// textproto refuses a part header holding a NUL before we can read the filename; a NUL
	// in a file name is an invalid path, whichever layer notices it.
	if strings.Contains(msg, "filename") && (strings.ContainsRune(msg, 0) || strings.Contains(msg, `\x00`)) {
		return fmt.Errorf("%w: NUL in a file name", deploy.ErrInvalidPath)
	}
	if strings.Contains(msg, "multipart") || strings.Contains(msg, "MIME") || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: %v", deploy.ErrInvalidBody, err)
	}
	return err
}

// extra hands a part to fields when there are any. A refusal of the field's value stays as
// fields said it; a failure to read the part is the body's.
func extra(fields Fields, field string, part io.Reader) (bool, error) {
	if fields == nil {
		return false, nil
	}
	handled, err := fields(field, part)
	var pe *deploy.ParamError
	if err != nil && !errors.As(err, &pe) {
		err = bodyError(err)
	}
	return handled || err != nil, err
}
