package deliverability

// MergeSPF is mergeSPF, for the tests of the SPF proposal.
var MergeSPF = mergeSPF
