package delivery

import (
	"strings"
	"testing"
)

func TestVERP(t *testing.T) {
	t.Parallel()
	v, err := NewVERP("Bounces@Mail.Example.com", []byte("k1"))
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewVERP("bounces@mail.example.com", []byte("k2"))
	if v.Address() != "bounces@mail.example.com" || v.Domain() != "mail.example.com" {
		t.Fatalf("address %q domain %q", v.Address(), v.Domain())
	}
	for _, id := range []int64{1, 127, 128, 1 << 20, 9_999_999_999, 1<<63 - 1} {
		rp := v.ReturnPath(id)
		if !strings.HasPrefix(rp, "bounces+b") || !strings.HasSuffix(rp, "@mail.example.com") || len(rp) > 64+1+len("mail.example.com") {
			t.Fatalf("return path %q", rp)
		}
		for _, addr := range []string{rp, strings.ToUpper(rp), "<" + rp + ">"} {
			r, ok := v.Parse(addr)
			if !ok || !r.Bounce || r.Unsubscribe || r.ID != id {
				t.Fatalf("Parse(%q) = %+v %v, want row %d", addr, r, ok, id)
			}
		}
		if id2, ok := v.BounceToken(strings.TrimPrefix(strings.TrimSuffix(rp, "@mail.example.com"), "bounces+b")); !ok || id2 != id {
			t.Fatalf("BounceToken of %q: %d %v", rp, id2, ok)
		}
		un := v.Unsubscribe(id)
		if r, ok := v.Parse(un); !ok || !r.Unsubscribe || r.Bounce || r.ID != id {
			t.Fatalf("Parse(%q) = %+v %v", un, r, ok)
		} else if id2, ok := v.UnsubscribeToken(r.Token); !ok || id2 != id {
			t.Fatalf("UnsubscribeToken(%q) = %d %v", r.Token, id2, ok)
		} else if _, ok := v.BounceToken(r.Token); ok {
			t.Fatal("an unsubscribe token verifies as a bounce token")
		}
		mid := v.MessageID(id, "shop.example.com")
		if got, tok, ok := v.ParseMessageID(mid); !ok || got != id || !strings.Contains(rp, tok) {
			t.Fatalf("ParseMessageID(%q) = %d %q %v", mid, got, tok, ok)
		}
		// Another key's token, or another purpose's, names nothing.
		if r, ok := other.Parse(rp); !ok || r.ID != 0 {
			t.Fatalf("another key's return path: %+v %v", r, ok)
		}
		swapped := strings.Replace(un, "+u", "+b", 1)
		if r, ok := v.Parse(swapped); !ok || r.ID != 0 {
			t.Fatalf("an unsubscribe token read as a return path: %+v", r)
		}
	}
	for _, addr := range []string{"bounces@mail.example.com", "BOUNCES@mail.example.com"} {
		if r, ok := v.Parse(addr); !ok || !r.Bounce || r.ID != 0 {
			t.Fatalf("plain %q: %+v %v", addr, r, ok)
		}
	}
	for _, addr := range []string{"bounces+bforged@mail.example.com", "bounces+b@mail.example.com", "bounces+bAAAAAAAAAAAAAAAAAAAAAA@mail.example.com"} {
		if r, ok := v.Parse(addr); !ok || r.ID != 0 {
			t.Fatalf("forged %q: %+v %v (accepted, naming nothing)", addr, r, ok)
		}
	}
	for _, addr := range []string{"bounces@other.example.com", "postmaster@mail.example.com", "bounces+x1@mail.example.com", "bouncesx@mail.example.com", "bounces+@mail.example.com", ""} {
		if _, ok := v.Parse(addr); ok {
			t.Fatalf("%q accepted", addr)
		}
	}
	for _, bad := range []string{"", "no-at", "Name <a@b.example>", "a+b@c.example", "a@"} {
		if _, err := NewVERP(bad, nil); err == nil {
			t.Fatalf("NewVERP(%q) accepted", bad)
		}
	}
}

func FuzzVERPParse(f *testing.F) {
	v, _ := NewVERP("bounces@mail.example.com", []byte("k"))
	f.Add(v.ReturnPath(42))
	f.Add(v.Unsubscribe(42))
	f.Add("bounces+b@mail.example.com")
	f.Fuzz(func(t *testing.T, addr string) {
		r, ok := v.Parse(addr)
		if !ok && r != (Recipient{}) {
			t.Fatalf("refused with %+v", r)
		}
		if r.ID != 0 && v.ReturnPath(r.ID) != strings.ToLower(strings.Trim(strings.TrimSpace(addr), "<>")) && v.Unsubscribe(r.ID) != strings.ToLower(strings.Trim(strings.TrimSpace(addr), "<>")) {
			// A verified token is the one the row's address carries (base32
			// has one spelling per byte string once lower-cased).
			t.Fatalf("%q verified as row %d", addr, r.ID)
		}
		_, _, _ = v.ParseMessageID(addr)
	})
}
