#!/usr/bin/python3
"""scripts/deps_check.py's own checks: the package list file it reads, the links it follows,
the fresh machine it assumes, and (where apt knows Debian's packages) that a list missing a
package the build uses is caught, naming the file and its package."""
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import deps_check  # noqa: E402


class PackageLists(unittest.TestCase):
    def write(self, text):
        listing = tempfile.NamedTemporaryFile("w", suffix=".packages", delete=False)
        listing.write(text)
        listing.close()
        self.addCleanup(os.unlink, listing.name)
        return listing.name

    def test_modes_and_kinds_are_read_and_the_shared_build_list_joins_building_modes(self):
        lists = deps_check.read_lists(self.write(
            "# comment\nbuild packages: cmake ninja-build  # the build\n"
            "test packages: fortunes\ntest programs: xvfb-run\nformat-check packages: clang-format\n"))
        self.assertEqual(deps_check.words_of(lists, "test", "packages"),
                         ["cmake", "ninja-build", "fortunes"])
        self.assertEqual(deps_check.words_of(lists, "test", "programs"), ["xvfb-run"])
        self.assertEqual(deps_check.words_of(lists, "format-check", "packages"), ["clang-format"])

    def test_a_malformed_line_is_refused_with_its_file_and_line(self):
        path = self.write("build packages: cmake\ntest packges: fortunes\n")
        with self.assertRaises(SystemExit) as refused:
            deps_check.read_lists(path)
        self.assertIn(f"{path}:2:", str(refused.exception))


class Links(unittest.TestCase):
    def setUp(self):
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.target = os.path.join(folder.name, "libOpenCL.so.1")
        self.link = os.path.join(folder.name, "libOpenCL.so")
        self.stray = os.path.join(folder.name, "stray.h")
        for path in (self.target, self.stray):
            open(path, "w").close()
        os.symlink("libOpenCL.so.1", self.link)
        self.owners = {self.target: {"ocl-icd-libopencl1"}, self.link: {"ocl-icd-opencl-dev"}}

    def test_a_link_held_by_a_package_outside_the_list_fails_though_its_target_passes(self):
        self.assertEqual(deps_check.unaccounted(self.link, self.owners, {"ocl-icd-libopencl1"}),
                         (self.link, {"ocl-icd-opencl-dev"}))
        self.assertIsNone(deps_check.unaccounted(
            self.link, self.owners, {"ocl-icd-libopencl1", "ocl-icd-opencl-dev"}))

    def test_a_file_no_package_holds_fails(self):
        self.assertEqual(deps_check.unaccounted(self.stray, self.owners, {"anything"}),
                         (self.stray, set()))


class FreshMachine(unittest.TestCase):
    def test_it_holds_the_required_and_essential_packages_and_what_they_depend_on(self):
        def stanza(name, extra=""):
            return f"Package: {name}\nStatus: install ok installed\n{extra}"
        status = "\n\n".join([
            stanza("libc6", "Priority: required\nDepends: libgcc-s1\n"),
            stanza("libgcc-s1", "Priority: optional\n"),
            stanza("bash", "Essential: yes\nPre-Depends: base-files | other\n"),
            stanza("base-files", "Priority: optional\n"),
            stanza("cmake", "Priority: optional\nDepends: libc6\n")]) + "\n"
        with tempfile.NamedTemporaryFile("w", suffix=".status") as file:
            file.write(status)
            file.flush()
            fresh = deps_check.fresh_machine_status(file.name)
        self.assertEqual(set(fresh), {"libc6", "libgcc-s1", "bash", "base-files"})


@unittest.skipUnless(os.path.exists("/usr/include/sqlite3.h") and subprocess.run(
    ["apt-cache", "show", "libsqlite3-dev"], capture_output=True).returncode == 0,
    "needs libsqlite3-dev installed and apt's package lists (apt-get update)")
class AListMissingAPackage(unittest.TestCase):
    def test_the_header_it_would_have_installed_is_named_with_its_package(self):
        # Two short lists, the second with libsqlite3-dev, each resolved by apt as the project's
        # own lists are (whose completeness the deps-check stage checks): about a second each
        # here, where the whole test list took six.
        fresh = deps_check.fresh_machine_status()
        owners = deps_check.file_owners()
        without = deps_check.installed_on_a_fresh_machine(["cmake"], fresh)
        self.assertNotIn("libsqlite3-dev", without)
        missing = deps_check.unaccounted("/usr/include/sqlite3.h", owners, without)
        self.assertIsNotNone(missing)
        self.assertIn("libsqlite3-dev", missing[1])
        # With the package the same header is accounted for.
        with_it = deps_check.installed_on_a_fresh_machine(["cmake", "libsqlite3-dev"], fresh)
        self.assertIn("libsqlite3-dev", with_it)
        self.assertIsNone(deps_check.unaccounted("/usr/include/sqlite3.h", owners, with_it))


if __name__ == "__main__":
    unittest.main()
