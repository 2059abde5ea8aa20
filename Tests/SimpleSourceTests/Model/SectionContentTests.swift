// A section's own content (everything but its items): an Equatable section compares every field but its
// items, so a change to any of them is stored and published; nothing hides a header change by default.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceWire

/// A member of a channel, as in the README.
struct ChatMessage: Identifiable, Equatable, Sendable, Codable {
  var id: String
  var text: String
}

/// The README's channel: who may see it is its own content, beside its messages.
struct Channel: SectionType, Equatable, Codable {
  var id: String
  var members: Set<String>
  var items: [ChatMessage]
}

@Suite("Section content")
struct SectionContentTests {
  @Test("an Equatable section compares every field but its items")
  func equatableDefault() {
    let general = Channel(id: "general", members: ["ada"], items: [ChatMessage(id: "m1", text: "Hi")])
    var otherItems = general
    otherItems.items = []
    #expect(general.isContentEqual(to: otherItems), "items are not the section's own content")
    var otherMembers = general
    otherMembers.members.insert("bob")
    #expect(!general.isContentEqual(to: otherMembers), "a field beside the items is")
  }

  @Test("updateSection that changes only a field beside the header is stored and published as one batch")
  func updateSectionPublishes() async throws {
    let source = try BasicDataSource(sections: [
      Channel(id: "general", members: ["ada"], items: [ChatMessage(id: "m1", text: "Hi")])
    ])
    var batches = await source.subscribe().batches.makeAsyncIterator()
    let version = try await source.updateSection(
      Channel(id: "general", members: ["ada", "bob"], items: []))
    // A batch is awaited only once a version says there is one.
    try #require(version.number == 1, "a change, so a version")
    let batch = try #require(await batches.next())
    #expect(batch.changeset.sectionChanges.updates.map(\.id) == ["general"])
    let stored = await source.snapshot.sections[0]
    #expect(stored.members == ["ada", "bob"], "the new members are stored")
    #expect(stored.items.map(\.id) == ["m1"], "the items stay")
  }

  @Test("the README's channel adds a member, and that member's client receives it with its messages")
  func channelArrivesForItsNewMember() async throws {
    let chat = try BasicDataSource(sections: [
      Channel(id: "general", members: ["ada", "bob"], items: [ChatMessage(id: "m1", text: "Hello")]),
      Channel(id: "payroll", members: ["ada"], items: [ChatMessage(id: "m2", text: "Raises")]),
    ])
    let service = WireService(
      source: chat, stream: "chat-\(UUID())", edits: .transactions(on: chat),
      sections: { (user: String) in { channel in channel.members.contains(user) } })
    let bob = RemoteDataSource<Channel>()
    let connection = await service.connect(bob, scope: "bob")
    await connection.settled()
    #expect(await bob.snapshot.sectionIDs == ["general"])

    try await chat.updateSection(Channel(id: "payroll", members: ["ada", "bob"], items: []))
    await connection.settled()
    let shown = await bob.snapshot
    #expect(shown.sectionIDs == ["general", "payroll"], "payroll arrived for bob")
    #expect(shown.sections.last?.items.map(\.text) == ["Raises"], "with its messages")
    await connection.close()
  }
}
