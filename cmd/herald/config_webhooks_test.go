package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"net/http/httptest"
	"strings"
	"testing"

	"herald/dbtest"
)

// The provider webhooks' variables reach web.Options; a bad key or
// certificate stops herald at start with the variable's name.
func TestConfigWebhooks(t *testing.T) {
	t.Parallel()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	env := map[string]string{
		"HERALD_SES_TOPIC_ARN":             "arn:aws:sns:eu-west-1:123456789012:ses, arn:aws:sns:us-east-1:123456789012:ses2",
		"HERALD_SENDGRID_VERIFICATION_KEY": base64.StdEncoding.EncodeToString(der),
		"HERALD_WEBHOOK_USER":              "postmark",
		"HERALD_WEBHOOK_PASSWORD":          "a-long-password",
		"HERALD_MAILGUN_SIGNING_KEY":       "key-1",
	}
	cfg, err := loadConfig(envFrom(env))
	if err != nil {
		t.Fatal(err)
	}
	w := cfg.Webhooks
	if len(w.SESTopicARNs) != 2 || w.SESTopicARNs[1] != "arn:aws:sns:us-east-1:123456789012:ses2" || w.WebhookUser != "postmark" ||
		w.WebhookPassword != "a-long-password" || w.MailgunSigningKey != "key-1" || w.SendGridVerificationKey == "" {
		t.Fatalf("webhook options: %+v", w)
	}
	for _, bad := range []map[string]string{
		{"HERALD_SES_TOPIC_ARN": "my-topic"},
		{"HERALD_WEBHOOK_USER": "postmark"},
		{"HERALD_WEBHOOK_PASSWORD": "alone"},
	} {
		if _, err := loadConfig(envFrom(bad)); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}

	// Served by the app as configured: the body limit of a webhook is
	// 1 MB although the app's is 10 MB; a wrong password is 401.
	svc := dbtest.Service(t)
	app, err := newApp(context.Background(), svc, cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("POST", "/webhooks/mailgun", bytes.NewReader(bytes.Repeat([]byte(" "), 2<<20)))
	res, err := app.Test(req, -1)
	if err != nil || res.StatusCode != 413 {
		t.Fatalf("2 MB to /webhooks/mailgun: %v %v", res.StatusCode, err)
	}
	req = httptest.NewRequest("POST", "/webhooks/postmark", strings.NewReader(`{"RecordType":"Bounce"}`))
	req.SetBasicAuth("postmark", "wrong")
	if res, err = app.Test(req, -1); err != nil || res.StatusCode != 401 {
		t.Fatalf("wrong password: %v %v", res.StatusCode, err)
	}

	for name, e := range map[string]map[string]string{
		"HERALD_SENDGRID_VERIFICATION_KEY": {"HERALD_SENDGRID_VERIFICATION_KEY": "bm90IGEga2V5"},
		"HERALD_SES_CERT_FILE":             {"HERALD_SES_CERT_FILE": t.TempDir() + "/missing.pem"},
	} {
		cfg, err := loadConfig(envFrom(e))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := newApp(context.Background(), dbtest.Service(t), cfg, nil, nil); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
