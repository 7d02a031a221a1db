package deploy

import "strings"

// DispositionParams reads the name and filename parameters of a raw Content-Disposition
// header. mime/multipart's Part.FileName applies filepath.Base, dropping the folders a static
// site needs, and mime.ParseMediaType turns `\x` into `x` inside quotes, hiding a backslash
// that CleanPath must see. So this scanner keeps every byte of a value as sent, except that
// `\"` stands for a quote inside a quoted value.
func DispositionParams(header string) (field, filename string, hasFilename bool) {
	rest := header
	if i := strings.IndexByte(rest, ';'); i >= 0 {
		rest = rest[i+1:]
	} else {
		return "", "", false
	}
	for {
		rest = strings.TrimLeft(rest, " \t")
		if rest == "" {
			return field, filename, hasFilename
		}
		eq := strings.IndexByte(rest, '=')
		if eq < 0 {
			return field, filename, hasFilename
		}
		key := strings.ToLower(strings.TrimSpace(rest[:eq]))
		rest = rest[eq+1:]
		var val string
		val, rest = scanValue(rest)
		switch key {
		case "name":
			field = val
		case "filename":
			filename, hasFilename = val, true
		}
		if i := strings.IndexByte(rest, ';'); i >= 0 {
			rest = rest[i+1:]
		} else {
			return field, filename, hasFilename
		}
	}
}

// scanValue reads one parameter value, quoted or bare, and returns it and what follows.
func scanValue(s string) (string, string) {
	if !strings.HasPrefix(s, `"`) {
		end := strings.IndexByte(s, ';')
		if end < 0 {
			return strings.TrimSpace(s), ""
		}
		return strings.TrimSpace(s[:end]), s[end:]
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) && s[i+1] == '"' {
			b.WriteByte('"')
			i++
			continue
		}
		if c == '"' {
			return b.String(), s[i+1:]
		}
		b.WriteByte(c)
	}
	return b.String(), ""
}
