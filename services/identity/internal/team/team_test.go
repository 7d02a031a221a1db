package team

import (
	"errors"
	"strings"
	"testing"
	"time"

	"tori.dev/contract/access"
	"tori.dev/contract/names"
)

func TestSlugCandidate(t *testing.T) {
	for name, want := range map[string]string{
		"Ada Lovelace":            "ada-lovelace",
		"ada.lovelace":            "ada-lovelace",
		"  --Acme, Inc.--  ":      "acme-inc",
		"Zürich 42":               "z-rich-42",
		"???":                     "team",
		"":                        "team",
		strings.Repeat("ab-", 30): strings.Repeat("ab-", 13) + "a", // at most 40 from the name
	} {
		if got := SlugCandidate(name, 0); got != want || !names.ValidSlug(got) {
			t.Errorf("SlugCandidate(%q) = %q, want %q", name, got, want)
		}
	}
	a, b := SlugCandidate("Acme", 1), SlugCandidate("Acme", 1)
	if !strings.HasPrefix(a, "acme-") || len(a) != len("acme-")+6 || a == b || !names.ValidSlug(a) {
		t.Errorf("suffixed candidates %q %q", a, b)
	}
	if long := SlugCandidate(strings.Repeat("x", 200), 3); len(long) > names.SlugMaxLen {
		t.Errorf("candidate too long: %d", len(long))
	}
}

func TestParseNameAndSlug(t *testing.T) {
	if n, err := ParseName("  Acme  "); err != nil || n != "Acme" {
		t.Errorf("ParseName: %q %v", n, err)
	}
	for _, bad := range []string{"", "   ", strings.Repeat("é", MaxNameLen+1), "a\nb", "a\x00b", "\xff"} {
		if _, err := ParseName(bad); !errors.Is(err, ErrInvalidName) {
			t.Errorf("ParseName(%q): %v", bad, err)
		}
	}
	if _, err := ParseName(strings.Repeat("é", MaxNameLen)); err != nil {
		t.Errorf("a name of %d characters: %v", MaxNameLen, err)
	}
	for _, bad := range []string{"", "Acme", "a b", "a_b", strings.Repeat("a", 64)} {
		if _, err := ParseSlug(bad); !errors.Is(err, ErrInvalidSlug) {
			t.Errorf("ParseSlug(%q): %v", bad, err)
		}
	}
	if _, err := ParseRole("chief"); !errors.Is(err, ErrInvalidRole) {
		t.Errorf("ParseRole: %v", err)
	}
}

// Every actor against every target and new role: who may change whom.
func TestRoleRules(t *testing.T) {
	required := func(err error) string {
		var d *access.Denied
		if errors.As(err, &d) {
			if d.Code != access.CodeInsufficientRole {
				t.Fatalf("code %s", d.Code)
			}
			return d.Required
		}
		if err != nil {
			t.Fatal(err)
		}
		return ""
	}
	for _, actor := range access.Roles() {
		for _, from := range access.Roles() {
			target := Member{Role: from}
			for _, to := range access.Roles() {
				want := ""
				switch {
				case actor < access.Admin:
					want = "admin"
				case (from == access.Owner || to == access.Owner) && actor < access.Owner:
					want = "owner"
				}
				if got := required(MayChangeRole(actor, target, to)); got != want {
					t.Errorf("%s changes %s to %s: needs %q, want %q", actor, from, to, got, want)
				}
			}
			wantRemove := ""
			switch {
			case actor < access.Admin:
				wantRemove = "admin"
			case from == access.Owner && actor < access.Owner:
				wantRemove = "owner"
			}
			if got := required(MayRemove(actor, false, target)); got != wantRemove {
				t.Errorf("%s removes %s: needs %q, want %q", actor, from, got, wantRemove)
			}
			if got := required(MayRemove(actor, true, target)); got != "" {
				t.Errorf("%s leaving: needs %q", actor, got)
			}
			wantInvite := ""
			switch {
			case actor < access.Admin:
				wantInvite = "admin"
			case from == access.Owner && actor < access.Owner:
				wantInvite = "owner"
			}
			if got := required(MayInvite(actor, from)); got != wantInvite {
				t.Errorf("%s invites as %s: needs %q, want %q", actor, from, got, wantInvite)
			}
		}
	}
	owner := Member{Role: access.Owner}
	if !errors.Is(KeepsAnOwner(owner, access.Admin, 1), ErrLastOwner) || !errors.Is(KeepsAnOwner(owner, access.NoRole, 1), ErrLastOwner) {
		t.Error("the last owner was let go")
	}
	if KeepsAnOwner(owner, access.Owner, 1) != nil || KeepsAnOwner(owner, access.NoRole, 2) != nil ||
		KeepsAnOwner(Member{Role: access.Admin}, access.NoRole, 1) != nil {
		t.Error("a change that keeps an owner was refused")
	}
}

func TestInvitation(t *testing.T) {
	now := time.Date(2026, 11, 22, 2, 30, 0, 0, time.UTC)
	inv, code := NewInvitation("team", "bob@example.com", access.Developer, "ada", now)
	if len(code) < 43 || string(inv.Hash) != string(HashCode(code)) || !inv.ExpiresAt.Equal(now.Add(7*24*time.Hour)) || !inv.Pending(now) {
		t.Fatalf("invitation %+v", inv)
	}
	if _, other := NewInvitation("team", "bob@example.com", access.Developer, "ada", now); other == code {
		t.Fatal("two invitations share a code")
	}
	mismatch := inv
	if err := mismatch.Accept("eve@example.com", now); !errors.Is(err, ErrEmailMismatch) || mismatch.AcceptedAt != nil {
		t.Fatalf("another address: %v", err)
	}
	late := inv
	if err := late.Accept("bob@example.com", inv.ExpiresAt); !errors.Is(err, ErrInvitationExpired) || late.Pending(inv.ExpiresAt) {
		t.Fatalf("expired: %v", err)
	}
	ok := inv
	if err := ok.Accept("bob@example.com", inv.ExpiresAt.Add(-time.Second)); err != nil || ok.AcceptedAt == nil || ok.Pending(now) {
		t.Fatalf("accept: %v", err)
	}
	if err := ok.Accept("bob@example.com", now); !errors.Is(err, ErrInvalidInvitation) {
		t.Fatalf("a used invitation: %v", err)
	}
	revoked := inv
	revoked.RevokedAt = &now
	if err := revoked.Accept("bob@example.com", now); !errors.Is(err, ErrInvalidInvitation) {
		t.Fatalf("a withdrawn invitation: %v", err)
	}
}

func TestMemberLimit(t *testing.T) {
	if MemberLimit(0) != NestlingMembers || MemberLimit(10) != 10 {
		t.Error("MemberLimit")
	}
	if MayAddMember(1, 1, 3, "nestling") != nil {
		t.Error("a third fits nestling")
	}
	var lim *LimitError
	if err := MayAddMember(2, 1, 3, "nestling"); !errors.As(err, &lim) || lim.Code != CodeMemberLimit || lim.Limit != 3 || lim.Plan != "nestling" {
		t.Errorf("a fourth: %v", err)
	}
}
