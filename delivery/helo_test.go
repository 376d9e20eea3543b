package delivery

import "testing"

func TestHeloName(t *testing.T) {
	for in, want := range map[string]string{
		"mail.shop.example": "mail.shop.example", "127.0.0.1": "[127.0.0.1]", "::1": "[IPv6:::1]", "[2001:db8::5]": "[IPv6:2001:db8::5]",
		"localhost": "localhost",
	} {
		if got := HeloName(in); got != want {
			t.Errorf("HeloName(%q) = %q, want %q", in, got, want)
		}
		if !ValidHeloName(want) {
			t.Errorf("%q is not valid", want)
		}
	}
	for _, bad := range []string{"", "mail shop", "a\r\nQUIT", "a..b", "[not an ip]", "under_score.example"} {
		if ValidHeloName(bad) {
			t.Errorf("%q is valid", bad)
		}
	}
}

func TestWithHelo(t *testing.T) {
	for _, tc := range []struct{ url, name, want string }{
		{"smtp://relay.example:25?tls=none", "mail.shop.example", "smtp://relay.example:25?helo=mail.shop.example&tls=none"},
		{"smtp://u:p%40ss@relay.example:587", "[127.0.0.1]", "smtp://u:p%40ss@relay.example:587?helo=%5B127.0.0.1%5D"},
		{"smtp://relay.example?helo=own.example", "mail.shop.example", "smtp://relay.example?helo=own.example"},
		{"", "mail.shop.example", ""},
	} {
		got := WithHelo(tc.url, tc.name)
		if got != tc.want {
			t.Errorf("WithHelo(%q, %q) = %q, want %q", tc.url, tc.name, got, tc.want)
			continue
		}
		if got != "" {
			c, err := ParseSMTPURL(got)
			if err != nil {
				t.Fatal(err)
			}
			if tc.url == tc.want && c.LocalName != "own.example" || tc.url != tc.want && c.LocalName != tc.name {
				t.Errorf("%s: EHLO name %q", got, c.LocalName)
			}
		}
	}
}
