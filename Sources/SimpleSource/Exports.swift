// The umbrella: `import SimpleSource` brings every layer a user reaches for, as NIO and Hummingbird do.

@_exported public import SimpleSourceCore

@_exported public import SimpleSourceScreens
@_exported public import SimpleSourceUIKit
@_exported public import SimpleSourceViews
@_exported public import SimpleSourceWire
