package service

import "herald/service/campaign"

// Names of the public archive (service/campaign/archive.go).

// ArchiveList is one page of an account's public archive.
type ArchiveList = campaign.ArchiveList

// ArchiveEntry is one archived send in a list or a feed.
type ArchiveEntry = campaign.ArchiveEntry

// ArchivedSend is one archived send rendered without recipient data.
type ArchivedSend = campaign.ArchivedSend

// ArchivePageSize is how many sends one page of an archive holds.
const ArchivePageSize = campaign.ArchivePageSize
