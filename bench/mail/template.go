package main

import (
	"fmt"
	"strings"
)

// templateBytes is the size the generated newsletter aims at: the 20 KB
// HTML template the mail benchmark measures.
const templateBytes = 20 * 1024

// placeholders are the five distinct names the template uses.
var placeholders = []string{"first_name", "last_name", "email", "city", "unsubscribe_preferences"}

// newsletterHTML returns a realistic table-layout newsletter of about 20 KB:
// a head with responsive CSS, a header with a logo and a "view in browser"
// link, a greeting, article blocks (image, title, two paragraphs, a button
// link) repeated with varied text, a two-column product row, and a footer.
// It holds exactly the five placeholders of placeholders, some of them more
// than once, in text and in an href.
func newsletterHTML() string {
	var head, top, footer strings.Builder
	head.WriteString(`<!DOCTYPE html>
<html lang="en" xmlns="http://www.w3.org/1999/xhtml">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="X-UA-Compatible" content="IE=edge">
<title>Café Zoë — this week</title>
<style>
  body{margin:0;padding:0;-webkit-text-size-adjust:100%;-ms-text-size-adjust:100%}
  table,td{border-collapse:collapse;mso-table-lspace:0pt;mso-table-rspace:0pt}
  img{border:0;height:auto;line-height:100%;outline:none;text-decoration:none;-ms-interpolation-mode:bicubic}
  a{color:#b5542a}
  @media only screen and (max-width:620px){
    .container{width:100%!important}
    .col{display:block!important;width:100%!important}
    .pad{padding-left:16px!important;padding-right:16px!important}
    h1{font-size:24px!important;line-height:30px!important}
  }
</style>
</head>
<body style="margin:0;padding:0;background-color:#f2efe9">
`)
	top.WriteString(`<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="background-color:#f2efe9">
<tr><td align="center" style="padding:24px 8px">
<table role="presentation" class="container" width="600" cellpadding="0" cellspacing="0" border="0" style="width:600px;max-width:600px;background-color:#ffffff;border-radius:6px">
<tr><td class="pad" style="padding:16px 32px;font-family:Georgia,'Times New Roman',serif;font-size:12px;color:#7a6f66;text-align:right">
<a href="https://news.cafe-zoe.example.com/view/weekly-47?utm_source=herald&amp;utm_medium=email" style="color:#7a6f66">View this mail in your browser</a>
</td></tr>
<tr><td class="pad" align="center" style="padding:8px 32px 24px">
<a href="https://www.cafe-zoe.example.com/?utm_source=herald&amp;utm_medium=email&amp;utm_campaign=weekly-47"><img src="https://cdn.cafe-zoe.example.com/mail/logo-240.png" width="240" height="64" alt="Café Zoë" style="display:block;width:240px"></a>
</td></tr>
<tr><td class="pad" style="padding:0 32px 8px;font-family:Georgia,'Times New Roman',serif;color:#2f2a26">
<h1 style="margin:0 0 12px;font-size:28px;line-height:34px;font-weight:normal">Hello ((first_name)),</h1>
<p style="margin:0 0 16px;font-size:16px;line-height:24px">Autumn has reached ((city)), and so have our new seasonal bakes. Here is what came out of the oven this week, the stories behind them, and a few things we think you will like.</p>
</td></tr>
`)
	footer.WriteString(`<tr><td class="pad" style="padding:24px 32px;background-color:#2f2a26;font-family:Arial,Helvetica,sans-serif;font-size:12px;line-height:18px;color:#d8cfc6">
<p style="margin:0 0 8px">This mail was sent to ((first_name)) ((last_name)) at ((email)) because you signed up at one of our cafés or on our website.</p>
<p style="margin:0 0 8px">Café Zoë SARL, 12 rue des Tanneurs, 69001 Lyon, France</p>
<p style="margin:0"><a href="((unsubscribe_preferences))" style="color:#ffffff;text-decoration:underline">Unsubscribe or change your preferences</a> · <a href="https://www.cafe-zoe.example.com/privacy" style="color:#ffffff;text-decoration:underline">Privacy</a></p>
</td></tr>
</table>
</td></tr>
</table>
</body>
</html>
`)

	titles := []string{
		"The return of the chestnut tart", "Meet our new head baker", "Sourdough, slowly",
		"Three coffees from Huila", "A crème brûlée for two", "Our winter opening hours",
		"Pear and hazelnut, again", "Behind the counter in Croix-Rousse", "Hot chocolate, the old way",
	}
	sentences := []string{
		"We bake every loaf in small batches before dawn, so that the first customers get bread that is still warm.",
		"The flour comes from a mill forty kilometres away, and the butter from a farm we have worked with for eleven years.",
		"Each recipe is tested for weeks in the kitchen before it reaches the counter, and some never make it.",
		"Ask at the counter for a taste: we would rather you try it than take our word for it.",
		"Prices stay the same this season, and members still get every tenth coffee free.",
		"The beans are roasted on Tuesdays in our own workshop and reach the cafés on Wednesday morning.",
		"If you have an allergy, our staff can tell you exactly what goes into everything we sell.",
		"Orders for the weekend can be placed online until Thursday evening and collected from any of our shops.",
	}
	article := func(i int) string {
		var b strings.Builder
		t := titles[i%len(titles)]
		slug := strings.ToLower(strings.NewReplacer(" ", "-", "é", "e", "û", "u", ",", "").Replace(t))
		fmt.Fprintf(&b, `<tr><td class="pad" style="padding:16px 32px 0">
<a href="https://www.cafe-zoe.example.com/journal/%[1]s?utm_source=herald&amp;utm_medium=email&amp;utm_campaign=weekly-47&amp;utm_content=image-%[2]d"><img src="https://cdn.cafe-zoe.example.com/mail/weekly-47/%[2]d-536.jpg" width="536" alt="%[3]s" style="display:block;width:100%%;max-width:536px;border-radius:4px"></a>
</td></tr>
<tr><td class="pad" style="padding:16px 32px 8px;font-family:Georgia,'Times New Roman',serif;color:#2f2a26">
<h2 style="margin:0 0 8px;font-size:21px;line-height:28px;font-weight:normal">%[3]s</h2>
<p style="margin:0 0 12px;font-size:15px;line-height:23px">%[4]s %[5]s</p>
<p style="margin:0 0 16px;font-size:15px;line-height:23px">%[6]s</p>
<table role="presentation" cellpadding="0" cellspacing="0" border="0"><tr><td style="background-color:#b5542a;border-radius:4px">
<a href="https://www.cafe-zoe.example.com/journal/%[1]s?utm_source=herald&amp;utm_medium=email&amp;utm_campaign=weekly-47&amp;utm_content=button-%[2]d" style="display:inline-block;padding:10px 20px;font-family:Arial,Helvetica,sans-serif;font-size:14px;color:#ffffff;text-decoration:none">Read more</a>
</td></tr></table>
</td></tr>
`, slug, i+1, t, sentences[i%len(sentences)], sentences[(i+3)%len(sentences)], sentences[(i+5)%len(sentences)])
		return b.String()
	}
	products := `<tr><td class="pad" style="padding:24px 32px 16px">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0"><tr>
<td class="col" width="50%" valign="top" style="padding:0 8px 0 0;font-family:Arial,Helvetica,sans-serif;font-size:14px;line-height:20px;color:#2f2a26"><img src="https://cdn.cafe-zoe.example.com/mail/p/galette-260.jpg" width="260" alt="Galette des rois" style="display:block;width:100%;border-radius:4px"><p style="margin:8px 0 4px"><strong>Galette des rois</strong> — 24,00 €</p><a href="https://shop.cafe-zoe.example.com/p/galette?utm_source=herald&amp;utm_medium=email">Order for Sunday</a></td>
<td class="col" width="50%" valign="top" style="padding:0 0 0 8px;font-family:Arial,Helvetica,sans-serif;font-size:14px;line-height:20px;color:#2f2a26"><img src="https://cdn.cafe-zoe.example.com/mail/p/beans-260.jpg" width="260" alt="Huila beans, 250 g" style="display:block;width:100%;border-radius:4px"><p style="margin:8px 0 4px"><strong>Huila beans, 250 g</strong> — 9,50 €</p><a href="https://shop.cafe-zoe.example.com/p/huila?utm_source=herald&amp;utm_medium=email">Add to my order</a></td>
</tr></table>
</td></tr>
`
	var b strings.Builder
	b.WriteString(head.String())
	b.WriteString(top.String())
	fixed := b.Len() + len(products) + footer.Len()
	for i := 0; ; i++ {
		a := article(i)
		if fixed+len(a) > templateBytes {
			break
		}
		b.WriteString(a)
		fixed += len(a)
		if i == 2 {
			b.WriteString(products)
		}
	}
	// Fill the rest with a list of links to older journal entries, so that
	// the template comes within a few dozen bytes of templateBytes.
	const listOpen = `<tr><td class="pad" style="padding:8px 32px 24px;font-family:Arial,Helvetica,sans-serif;font-size:14px;line-height:22px;color:#2f2a26">
<p style="margin:0 0 4px"><strong>More from the journal</strong></p>
<ul style="margin:0;padding:0 0 0 18px">
`
	const listClose = "</ul>\n</td></tr>\n"
	if fixed+len(listOpen)+len(listClose) < templateBytes {
		b.WriteString(listOpen)
		fixed += len(listOpen) + len(listClose)
		for i := 0; ; i++ {
			item := fmt.Sprintf("<li><a href=\"https://www.cafe-zoe.example.com/journal/archive/%d\">%s</a></li>\n", 100+i, titles[(i+4)%len(titles)])
			if fixed+len(item) > templateBytes {
				break
			}
			b.WriteString(item)
			fixed += len(item)
		}
		b.WriteString(listClose)
	}
	b.WriteString(footer.String())
	return b.String()
}

// subjectTemplate is rendered per recipient with the raw values.
const subjectTemplate = "((first_name)), autumn is here: new bakes at Café Zoë"

// recipient holds one contact's values.
type recipient struct {
	first, last, email, city, unsub string
}

// lookup is the raw value of a placeholder ("" for an unknown name, as
// decisions.md section 5 says).
func (r *recipient) lookup(name string) string {
	switch name {
	case "first_name":
		return r.first
	case "last_name":
		return r.last
	case "email":
		return r.email
	case "city":
		return r.city
	case "unsubscribe_preferences":
		return r.unsub
	}
	return ""
}

// recipients returns n contacts with varied values: accents, an apostrophe
// and an ampersand (which HTML escaping changes), different lengths.
func recipients(n int) []recipient {
	firsts := []string{"Ana", "Zoë", "Łukasz", "Siobhán", "José", "Mia", "Noah", "Chloé", "Björn", "D'Arcy", "Xu", "Marie-Hélène"}
	lasts := []string{"Martin", "Nowak", "O'Brien", "García Márquez", "Smith & Co", "Dubois", "Müller", "Lee", "Rossi", "Andersson"}
	cities := []string{"Lyon", "Köln", "São Paulo", "Zürich", "New York", "Saint-Étienne", "Kraków", "Osaka"}
	out := make([]recipient, n)
	for i := range out {
		out[i] = recipient{
			first: firsts[i%len(firsts)],
			last:  lasts[(i/3)%len(lasts)],
			email: fmt.Sprintf("contact%06d@example.net", i),
			city:  cities[(i/7)%len(cities)],
			unsub: fmt.Sprintf("https://herald.example.com/unsubscribe/%06d/9f%08x", i, uint32(i)*2654435761),
		}
	}
	return out
}
