// Package delivery turns designs into mail and hands it to a transport.
//
//   - Placeholders: Compile parses ((name)) once; Template.Render fills it per
//     recipient.
//   - Messages: Build writes an RFC 5322 multipart/alternative message (text part
//     derived by HTMLToText), with List-Unsubscribe (RFC 8058) and a hidden
//     preheader.
//   - DKIM: GenerateDKIM / ParseDKIMKey keys, DNSRecord to publish; herald's own
//     signer (dkim_sign.go): BuildSigned hashes the body while Build's encoder
//     writes it, SignMessage signs built bytes; RSA by crypto/rsa, or by OpenSSL
//     in a build with -tags openssl (dkim_rsa_openssl.go). SPFRecord and
//     DMARCRecord for the sender's other DNS records.
//   - Transports: the outbox (NewOutbox over an OutboxStore the service layer
//     implements) and the SMTP pool (NewSMTPPool: reused connections, PIPELINING
//     when the relay offers it, smtpconn.go), or Relays over several pools
//     (relays.go: routing by From domain, weights, failover, rates counted in
//     a RateStore), chosen by Open from HERALD_SMTP_URL. Every Send failure is a *SendError saying whether a retry
//     may succeed.
//   - Sending: Engine claims ledger rows from a Store, builds and sends them on
//     Conns workers and records outcomes in group commits, with at most
//     2 x Conns messages handed to the transport and unrecorded.
//
// The package imports no HTTP, web or api code; what it needs from the rest of
// herald it declares as small interfaces (OutboxStore).
package delivery
