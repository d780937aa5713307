# Checks the Homebrew formula a release wrote (scripts/formula.sh) against the archives it
# was written from, without Homebrew: the formula is loaded with a small stand-in for
# Homebrew's Formula class (only the parts the formula uses), and then
#   - each of the four platforms (macOS and Linux, arm64 and x86-64) has a URL and a sum;
#   - each URL is the release's (the homepage's releases/download/vVERSION/) and names an
#     archive in ARCHIVES_DIR whose SHA-256 is the formula's;
#   - on this machine's platform, the formula's `install` and `test` run as Homebrew runs
#     them: the archive unpacked, its one folder entered, `bin.install`, then the test
#     block against the installed binary.
# `ruby -c` (syntax) runs first, in scripts/publish.sh. Written for any Ruby from 2.6 (the
# one macOS ships) on.
#
#   ruby scripts/check-formula.rb FORMULA ARCHIVES_DIR
#
# Prints one line per platform checked; exits 1 with the reason on the first mismatch.

require "digest"
require "fileutils"
require "open3"
require "tmpdir"

def fail!(message)
  warn "check-formula: error: #{message}"
  exit 1
end

# What a formula declares, recorded per platform instead of acted on.
class Formula
  PLATFORMS = [[:macos, :arm], [:macos, :intel], [:linux, :arm], [:linux, :intel]].freeze

  class << self
    attr_reader :urls, :sums, :install_block, :test_block

    def inherited(subclass)
      super
      subclass.instance_variable_set(:@urls, {})
      subclass.instance_variable_set(:@sums, {})
      Formula.instance_variable_set(:@loaded, subclass)
    end

    def loaded
      Formula.instance_variable_get(:@loaded)
    end

    %i[desc homepage version license].each do |field|
      define_method(field) do |value = nil|
        instance_variable_set(:"@#{field}", value) unless value.nil?
        instance_variable_get(:"@#{field}")
      end
    end

    def on_macos(&block)
      within(os: :macos, &block)
    end

    def on_linux(&block)
      within(os: :linux, &block)
    end

    def on_arm(&block)
      within(cpu: :arm, &block)
    end

    def on_intel(&block)
      within(cpu: :intel, &block)
    end

    def url(value)
      @urls[place] = value
    end

    def sha256(value)
      @sums[place] = value
    end

    def test(&block)
      @test_block = block
    end

    private

    def within(os: nil, cpu: nil)
      saved = [@os, @cpu]
      @os = os || @os
      @cpu = cpu || @cpu
      yield
    ensure
      @os, @cpu = saved
    end

    def place
      fail!("url or sha256 outside an on_macos/on_linux and on_arm/on_intel block") unless @os && @cpu
      [@os, @cpu]
    end
  end

  attr_reader :bin

  def initialize(prefix)
    @bin = Bin.new(File.join(prefix, "bin"))
  end

  def version
    self.class.version
  end

  def shell_output(command)
    out, status = Open3.capture2(command)
    fail!("`#{command}` exited #{status.exitstatus}") unless status.success?
    out
  end

  def assert_match(expected, actual)
    fail!("the test expected #{expected.inspect} in #{actual.inspect}") unless actual.include?(expected)
  end

  # Homebrew's bin.install: moves the named files of the unpacked archive into bin.
  class Bin
    def initialize(path)
      @path = path
    end

    def install(*names)
      FileUtils.mkdir_p(@path)
      names.each do |name|
        fail!("the archive has no #{name} to install") unless File.file?(name)
        FileUtils.mv(name, File.join(@path, name))
      end
    end

    def to_s
      @path
    end
  end
end

formula_file, archives = ARGV
fail!("usage: ruby scripts/check-formula.rb FORMULA ARCHIVES_DIR") unless formula_file && archives
load File.expand_path(formula_file)
formula = Formula.loaded
fail!("#{formula_file} defines no formula") unless formula
fail!("the formula's class is #{formula.name}, not Pagent") unless formula.name == "Pagent"
%i[desc homepage version license].each do |field|
  fail!("the formula has no #{field}") if formula.public_send(field).to_s.empty?
end
release = "#{formula.homepage}/releases/download/v#{formula.version}/"

host = [RUBY_PLATFORM.include?("darwin") ? :macos : :linux,
        RUBY_PLATFORM.match?(/aarch64|arm64/) ? :arm : :intel]
host_archive = nil
Formula::PLATFORMS.each do |platform|
  url = formula.urls[platform] or fail!("no url for #{platform.join(' ')}")
  sum = formula.sums[platform] or fail!("no sha256 for #{platform.join(' ')}")
  fail!("#{url} is not an asset of the release (#{release}...)") unless url.start_with?(release)
  file = File.join(archives, File.basename(url))
  fail!("#{File.basename(url)} is not in #{archives}") unless File.file?(file)
  actual = Digest::SHA256.file(file).hexdigest
  fail!("the sha256 of #{File.basename(url)} is #{actual}, the formula says #{sum}") unless actual == sum
  puts "check-formula: #{platform.join(' ')}: #{File.basename(url)} #{sum}"
  host_archive = file if platform == host
end
extra = formula.urls.keys - Formula::PLATFORMS
fail!("urls for unknown platforms: #{extra}") unless extra.empty?

# This machine's platform, installed and tested as Homebrew would.
Dir.mktmpdir("check-formula") do |tmp|
  unpacked = File.join(tmp, "unpacked")
  FileUtils.mkdir_p(unpacked)
  _, status = Open3.capture2e("tar", "-xzf", host_archive, "-C", unpacked)
  fail!("cannot unpack #{host_archive}") unless status.success?
  top = Dir.children(unpacked)
  fail!("#{File.basename(host_archive)} holds #{top}, not one folder") unless top.size == 1
  instance = formula.new(File.join(tmp, "prefix"))
  Dir.chdir(File.join(unpacked, top.first)) { instance.install }
  instance.instance_eval(&formula.test_block)
  puts "check-formula: #{host.join(' ')}: installed from #{File.basename(host_archive)}, and its test passed"
end
