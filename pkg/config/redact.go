package config

import "net/url"

// RedactURL removes the password from a URL-shaped string. Anything that does not parse as a
// URL with user information is returned as it is.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, has := u.User.Password(); !has {
		return s
	}
	u.User = url.UserPassword(u.User.Username(), "xxxxx")
	return u.String()
}
