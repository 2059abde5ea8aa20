// The remote source's state machine, without async: examples, then every sequence of messages to a depth.

import Foundation
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceWire

@Suite("Remote state machine")
struct RemoteStateMachineTests {
  typealias Machine = RemoteStateMachine<String>

  @Test("batches are ignored until a reset, applied while following, and ignored again after a refusal")
  func phases() {
    var machine = Machine()
    #expect(machine.batch() == .ignore)
    #expect(machine.ignoredBatches == 1)
    #expect(machine.reset(stream: "s", version: 4) == [])
    #expect(machine.batch() == .apply(at: 4))
    #expect(machine.applied(to: 6) == [])
    #expect(machine.batch() == .apply(at: 6))
    let error = machine.refused(WireError(.idMismatch, "stage 0"))
    #expect(error.code == .idMismatch && machine.phase == .awaitingStart)
    #expect(machine.batch() == .ignore)
    #expect(throws: WireError.self) { try machine.resumed(stream: "s", version: 5) }
    #expect(machine.lastError?.code == .versionMismatch)
    #expect(throws: Never.self) { try machine.resumed(stream: "s", version: 6) }
    #expect(machine.batch() == .apply(at: 6))
    #expect(machine.violations.isEmpty)
  }

  @Test(
    "a waiter returns when the state held reaches its version of its stream, when cancelled, or at the end")
  func waiters() {
    var machine = Machine()
    guard case .wait(let one) = machine.wait(until: 2, inStream: nil, "one"),
      case .wait = machine.wait(until: 1, inStream: "other", "other"),
      case .wait(let late) = machine.wait(until: 9, inStream: nil, "late")
    else {
      Issue.record("nothing is held yet")
      return
    }
    #expect(machine.reset(stream: "s", version: 1) == [])
    _ = machine.batch()
    #expect(machine.applied(to: 3) == ["one"])
    #expect(machine.cancelWait(one) == nil, "resumed already")
    #expect(machine.cancelWait(late) == "late")
    #expect(machine.reset(stream: "other", version: 1) == ["other"])
    guard case .resume("now", reached: true) = machine.wait(until: 1, inStream: "other", "now") else {
      Issue.record("version 1 of other is held")
      return
    }
    #expect(machine.violations.isEmpty)
  }

  /// Every sequence of messages and waits to the depth `SIMPLESOURCE_REMOTE_STATE_DEPTH` gives (5 by
  /// default, 6 in CI), against a model of the sender: resets and resumes of two streams, batches that
  /// chain from the version held, that skip or repeat one (as a stream that went wrong would), or that do
  /// not apply, refusals, waits and cancellations. A batch is applied only while following and only
  /// from the version held (never a gap, never a duplicate); every waiter is resumed exactly once, when
  /// its version is held, cancelled, or at the end.
  @Test("every sequence of messages keeps the remote source's promises")
  func exhaustive() throws {
    try checkEverySequence(
      "Remote state machine", from: RemoteWorld(), depthVariable: "SIMPLESOURCE_REMOTE_STATE_DEPTH",
      defaultDepth: 5)
  }
}

enum RemoteStep: CustomStringConvertible {
  case reset(stream: String, version: Int)
  case resumed(stream: String, version: Int)
  /// A batch from the version held plus `skew` (0 chains), that applies or not.
  case batch(skew: Int, applies: Bool)
  case refuse
  case wait(ahead: Int, stream: String?)
  case cancel(String)
  case finish

  var description: String {
    switch self {
    case .reset(let stream, let version): "reset \(stream)@\(version)"
    case .resumed(let stream, let version): "resumed \(stream)@\(version)"
    case .batch(let skew, let applies): "batch +\(skew)\(applies ? "" : " bad")"
    case .refuse: "refuse"
    case .wait(let ahead, let stream): "wait +\(ahead) \(stream ?? "any")"
    case .cancel(let name): "cancel \(name)"
    case .finish: "finish"
    }
  }
}

/// The machine and a model of what it must have done.
struct RemoteWorld: ExplorableWorld {
  var machine = RemoteStateMachine<String>()
  /// What the model says is held: the stream and version, and whether batches apply.
  var stream: String?
  var version: Int?
  var following = false
  var parked: [String: (id: Int, version: Int, stream: String?)] = [:]
  var resumed: Set<String> = []
  var waiterCount = 0

  func steps() -> [RemoteStep] {
    if machine.isFinished { return [] }
    var steps: [RemoteStep] = [
      .reset(stream: "a", version: (version ?? 0) + 1), .reset(stream: "b", version: 1),
      .resumed(stream: stream ?? "a", version: version ?? 0),
      .resumed(stream: "b", version: (version ?? 0) + 1),
      .batch(skew: 0, applies: true), .batch(skew: 0, applies: false), .batch(skew: 1, applies: true),
      .batch(skew: -1, applies: true), .refuse, .wait(ahead: 1, stream: nil), .wait(ahead: 0, stream: "b"),
    ]
    steps += parked.keys.sorted().map { .cancel($0) }
    steps.append(.finish)
    return steps
  }

  mutating func perform(_ step: RemoteStep) throws(PublishFailure) {
    switch step {
    case .reset(let newStream, let newVersion):
      stream = newStream
      version = newVersion
      following = true
      try resume(machine.reset(stream: newStream, version: newVersion))
    case .resumed(let resumedStream, let resumedVersion):
      let refusal: WireError?
      do {
        try machine.resumed(stream: resumedStream, version: resumedVersion)
        refusal = nil
      } catch {
        refusal = error
      }
      let holds = resumedStream == stream && resumedVersion == version
      if let refusal {
        guard refusal.code == .versionMismatch, !holds else {
          throw PublishFailure(description: "refused the resume of what is held: \(refusal)")
        }
        following = false
      } else {
        guard holds else {
          throw PublishFailure(description: "accepted a resume of another stream or version")
        }
        following = true
      }
    case .batch(let skew, let applies):
      switch machine.batch() {
      case .ignore:
        guard !following else { throw PublishFailure(description: "ignored a batch while following") }
      case .apply(let at):
        guard following, let held = version, at == held else {
          throw PublishFailure(
            description: "applies a batch at \(at), holding \(version.map(String.init) ?? "nothing")")
        }
        // The checked apply refuses a batch from another version (WireBatch.update) or one that does not fit.
        let from = held + skew
        if applies && from == held {
          version = from + 1
          try resume(machine.applied(to: from + 1))
        } else {
          _ = machine.refused(WireError(skew == 0 ? .idMismatch : .versionMismatch, "batch from \(from)"))
          following = false
        }
      }
    case .refuse:
      _ = machine.refused(WireError(.malformed, "bytes"))
      following = false
    case .wait(let ahead, let waitStream):
      waiterCount += 1
      let name = "w\(waiterCount)"
      let target = (version ?? 0) + ahead
      switch machine.wait(until: target, inStream: waitStream, name) {
      case .resume(let waiter, let reached):
        guard waiter == name, reached, isHeld(target, waitStream) else {
          throw PublishFailure(description: "\(name) resumed before its version was held")
        }
        try resume([waiter])
      case .wait(let id):
        guard !isHeld(target, waitStream) else {
          throw PublishFailure(description: "\(name) parked though held")
        }
        parked[name] = (id, target, waitStream)
      }
    case .cancel(let name):
      guard let entry = parked[name] else { return }
      guard machine.cancelWait(entry.id) == name else {
        throw PublishFailure(description: "cancelling \(name) did not hand it back")
      }
      try resume([name])
    case .finish:
      try resume(machine.finish())
      if !parked.isEmpty { throw PublishFailure(description: "waiters left at the end") }
    }
    if (machine.phase == .following) != following || machine.remoteVersion != version
      || machine.stream != stream
    {
      throw PublishFailure(
        description: "the machine holds \(machine.stream ?? "-")@\(machine.remoteVersion ?? -1)")
    }
    if let ready = parked.first(where: { isHeld($0.value.version, $0.value.stream) }) {
      throw PublishFailure(description: "\(ready.key) still waits for a version held")
    }
    let violations = machine.violations
    if !violations.isEmpty { throw PublishFailure(description: violations.joined(separator: "; ")) }
  }

  /// Every check is made after each step.
  func checkSettled() {}

  func isHeld(_ target: Int, _ waitStream: String?) -> Bool {
    guard let version, waitStream == nil || waitStream == stream else { return false }
    return version >= target
  }

  mutating func resume(_ waiters: [String]) throws(PublishFailure) {
    for waiter in waiters {
      guard resumed.insert(waiter).inserted else {
        throw PublishFailure(description: "\(waiter) resumed twice")
      }
      parked[waiter] = nil
    }
  }
}
