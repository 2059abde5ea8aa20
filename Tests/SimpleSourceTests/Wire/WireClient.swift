// A client for tests of the server side: it reads what a WireSession sends, holds the state it describes,
// and checks every state it reaches.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceWire

/// A client of a ``WireSession``: decodes each message sent to it, applies resets and batches to the state
/// it holds (each batch checked, as a remote source does), records errors, and checks every row it holds
/// after every message with `allows`.
final class WireClient: Sendable {
  struct State: Sendable {
    var stream: String?
    var version = 0
    var held = Snapshot<TestSection>()
    var formats: Set<Int> = []
    var messages: [String] = []
    var errors: [WireError] = []
    /// The errors of refused edits, in the order received.
    var refusals: [WireError] = []
    /// Refusals of what the server sent, and rows it should not have sent.
    var violations: [String] = []
  }

  let state = Locked(State())
  let allows: @Sendable (TestItem) -> Bool
  let allowsSection: @Sendable (TestSection) -> Bool
  /// Texts no message may contain (the ids and headers of sections the client may never see).
  let never: [String]

  init(
    allows: @escaping @Sendable (TestItem) -> Bool = { _ in true },
    allowsSection: @escaping @Sendable (TestSection) -> Bool = { _ in true }, never: [String] = []
  ) {
    self.allows = allows
    self.allowsSection = allowsSection
    self.never = never
  }

  /// What a session's `send` calls.
  func receive(_ data: Data) {
    state.withLock { state in
      let text = String(decoding: data, as: UTF8.self)
      for secret in never where text.contains(secret) {
        state.violations.append("a message names \(secret): \(text)")
      }
      do {
        let (message, format) = try WireCoder().read(data, as: TestSection.self)
        state.formats.insert(format)
        state.messages.append(message.typeName)
        switch message {
        case .reset(let stream, let version, let snapshot):
          (state.stream, state.version, state.held) = (stream, version, snapshot)
        case .resumed(let stream, let version):
          if stream != state.stream || version != state.version {
            state.violations.append("resumed \(stream) at \(version), holding \(state.version)")
          }
        case .batch(let batch):
          state.held = try batch.update(from: state.held, at: state.version).snapshot
          state.version = batch.to
        case .error(let error):
          state.errors.append(error)
        case .subscribe, .edit, .subscribeViews:
          state.violations.append("a \(message.typeName) sent to a client")
        case .views, .viewBatches:
          state.violations.append("a \(message.typeName) sent to a client of one stream")
        case .refused(_, let error):
          state.refusals.append(error)
        case .confirmed:
          break
        }
        for section in state.held.sections {
          if !allowsSection(section) {
            state.violations.append(
              "holds section \(section.id) (\(section.header ?? "-")) after a \(message.typeName) of \(state.stream ?? "-")"
            )
          }
          for item in section.items where !allows(item) {
            state.violations.append("holds \(item) after a \(message.typeName) of \(state.stream ?? "-")")
          }
        }
      } catch {
        state.violations.append("refused a message: \(error)")
      }
    }
  }

  /// The error of the last edit refused.
  var lastRefusal: WireError? { state.withLock { $0.refusals.last } }

  /// The subscribe a client holding this state sends: its stream and version, if any.
  var resumeRequest: (stream: String?, from: Int?) {
    state.withLock { ($0.stream, $0.stream == nil ? nil : $0.version) }
  }

}

extension WireSession where Section == TestSection {
  /// Awaits ``WireSession/settled()`` and checks that `client` then holds what the session follows: the
  /// view's newest version after every earlier write to the source, or its rows.
  func delivered(to client: WireClient, sourceLocation: SourceLocation = #_sourceLocation) async {
    await settled()
    guard let (shown, version, stream) = await following else { return }
    // A client whose batches to `version` composed to nothing holds an older number and the same rows.
    #expect(
      client.state.withLock { $0.stream == stream && ($0.version >= version || $0.held == shown) },
      "settled() returned before the client held \(stream) at \(version)", sourceLocation: sourceLocation)
  }
}

/// A message's bytes, as a client writes them.
func bytes(_ message: WireMessage<TestSection>, format: Int = 2) -> Data {
  WireCoder(formatVersion: format).encode(message)
}

/// The bytes of a client's first `subscribe`, holding nothing, for `query`.
func subscribe(_ query: WireQueryRequest?) -> Data { bytes(.subscribe(stream: nil, from: nil, query: query)) }

extension WireService where Section == TestSection, Scope == NoScope {
  /// A new client's session that has received `message` (a subscribe, usually).
  func connect(_ message: Data) async -> (session: WireSession<TestSection, NoScope>, client: WireClient) {
    let client = WireClient()
    let session = session { client.receive($0) }
    await session.receive(message)
    return (session, client)
  }
}
