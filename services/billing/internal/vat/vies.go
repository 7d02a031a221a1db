package vat

import (
	"context"
	"errors"
	"regexp"
	"strings"
)

// VIES checks a VAT ID with the EU's VAT Information Exchange System. The real client is an
// adapter outside this package; tests use FakeVIES, and nothing in the tests reaches VIES.
type VIES interface {
	// Check asks whether number is a valid VAT ID of the member state prefix names (the VAT
	// prefix: EL for Greece). ErrVIESUnavailable when VIES (or the member state's service
	// behind it) cannot answer.
	Check(ctx context.Context, prefix, number string) (valid bool, err error)
}

// ErrVIESUnavailable means VIES did not answer; the format check stands in until it does.
var ErrVIESUnavailable = errors.New("vat: VIES cannot be reached")

// Validation is the outcome of checking a VAT ID.
type Validation struct {
	Valid bool
	// FormatOnly is true when VIES could not answer and Valid is the format check's verdict:
	// the ID is to be checked again later.
	FormatOnly bool
}

// formats are the member states' VAT ID shapes after the prefix (European Commission, VIES
// FAQ); a state not listed is held to the generic 2 to 12 letters or digits.
var formats = map[string]*regexp.Regexp{
	"AT": regexp.MustCompile(`^U\d{8}$`),
	"BE": regexp.MustCompile(`^[01]\d{9}$`),
	"CZ": regexp.MustCompile(`^\d{8,10}$`),
	"DE": regexp.MustCompile(`^\d{9}$`),
	"DK": regexp.MustCompile(`^\d{8}$`),
	"EL": regexp.MustCompile(`^\d{9}$`),
	"ES": regexp.MustCompile(`^[0-9A-Z]\d{7}[0-9A-Z]$`),
	"FR": regexp.MustCompile(`^[0-9A-Z]{2}\d{9}$`),
	"IT": regexp.MustCompile(`^\d{11}$`),
	"NL": regexp.MustCompile(`^\d{9}B\d{2}$`),
	"PL": regexp.MustCompile(`^\d{10}$`),
	"SK": regexp.MustCompile(`^\d{10}$`),
}

var generic = regexp.MustCompile(`^[0-9A-Z+*]{2,12}$`)

// Split reads a VAT ID such as "DE 123 456 789" into its prefix and number, uppercased and
// without spaces, dots or dashes.
func Split(id string) (prefix, number string) {
	id = strings.ToUpper(strings.NewReplacer(" ", "", ".", "", "-", "").Replace(id))
	if len(id) < 3 {
		return "", ""
	}
	return id[:2], id[2:]
}

// PrefixOf is the VAT prefix of a country: the country code, but EL for Greece.
func PrefixOf(country string) string {
	if country == "GR" {
		return "EL"
	}
	return country
}

// FormatValid reports whether id has the shape of a VAT ID of country.
func FormatValid(id, country string) bool {
	prefix, number := Split(id)
	if prefix == "" || prefix != PrefixOf(country) {
		return false
	}
	if re, ok := formats[prefix]; ok {
		return re.MatchString(number)
	}
	return generic.MatchString(number)
}

// Validate checks id, a VAT ID of a customer in country: with VIES, or by its format while
// VIES cannot be reached. An ID of another state than the customer's is not valid for them.
func Validate(ctx context.Context, v VIES, id, country string) (Validation, error) {
	if !FormatValid(id, country) {
		return Validation{Valid: false}, nil
	}
	prefix, number := Split(id)
	valid, err := v.Check(ctx, prefix, number)
	if errors.Is(err, ErrVIESUnavailable) {
		return Validation{Valid: true, FormatOnly: true}, nil
	}
	if err != nil {
		return Validation{}, err
	}
	return Validation{Valid: valid}, nil
}

// FakeVIES is a FAKE VIES for tests: it knows the IDs it is given and can be down.
type FakeVIES struct {
	// Valid lists the IDs (prefix and number, e.g. "DE123456789") VIES confirms.
	Valid map[string]bool
	// Down makes every check fail with ErrVIESUnavailable.
	Down bool
}

// Check answers from Valid.
func (f FakeVIES) Check(_ context.Context, prefix, number string) (bool, error) {
	if f.Down {
		return false, ErrVIESUnavailable
	}
	return f.Valid[prefix+number], nil
}

// Unreachable is a VIES that never answers, so every VAT ID is held to the format check and
// marked for a later check. It stands in until a VIES client is configured.
type Unreachable struct{}

// Check always reports VIES as unavailable.
func (Unreachable) Check(context.Context, string, string) (bool, error) {
	return false, ErrVIESUnavailable
}
