// In tests, a version reads against a plain number by its number: what a test states is the count.

import SimpleSourceCore
import SimpleSourceViews
import SimpleSourceWire

extension Version {
  /// Whether the version's number is `number`; the counter is not compared (tests of counters compare
  /// versions, or `counter`, themselves).
  static func == (version: Version, number: Int) -> Bool { version.number == number }
  static func != (version: Version, number: Int) -> Bool { version.number != number }
  static func < (version: Version, number: Int) -> Bool { version.number < number }
  static func > (version: Version, number: Int) -> Bool { version.number > number }
  static func <= (version: Version, number: Int) -> Bool { version.number <= number }
  static func >= (version: Version, number: Int) -> Bool { version.number >= number }
  static func == (number: Int, version: Version) -> Bool { version.number == number }
  /// The number `offset` after the version's.
  static func + (version: Version, offset: Int) -> Int { version.number + offset }
  static func - (version: Version, offset: Int) -> Int { version.number - offset }
}

extension VersionCounter {
  /// The counter of versions a test numbers by hand (batches made directly, a receiver's versions).
  static let tests = VersionCounter()
}

extension UpdateBatch {
  /// A batch from version `from` to version `to` of the tests' own counter.
  init(from: Int, to: Int, changeset: Changeset<Section>) {
    self.init(from: from, to: to, of: .tests, changeset: changeset)
  }
}

extension WireBatch {
  /// The batch a receiver holding `snapshot` at version `version` of the tests' own counter re-serves.
  func update(from snapshot: Snapshot<Section>, at version: Int) throws(WireError) -> UpdateBatch<Section> {
    try update(from: snapshot, at: Version(version, of: .tests))
  }
}

extension Subscription {
  /// Whether the consumer holds version `number` of the subscription's counter, once it does.
  func reached(_ number: Int) async -> Bool { (try? await reached(Version(number, of: counter))) ?? false }
}

extension BasicDataSource {
  /// Returns once version `number` of this source is offered to every subscriber.
  @discardableResult
  func settled(through number: Int) async -> Bool { await settled(throughNumber: number) }
}

@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
extension ObservedList {
  /// Whether the model holds version `number` of its source's counter, once it does.
  func reached(_ number: Int) async -> Bool {
    (try? await reached(Version(number, of: version.counter))) ?? false
  }
}

@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
extension ObservedWindow {
  /// Whether the model holds version `number` of its source's counter, once it does.
  func reached(_ number: Int) async -> Bool {
    (try? await reached(Version(number, of: version.counter))) ?? false
  }
}
