// In tests, a version reads against a plain number by its number: what a test states is the count.

import SimpleSourceCore

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
