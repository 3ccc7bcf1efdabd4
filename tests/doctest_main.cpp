#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

namespace {

// Every failure again, once the run ends, just above doctest's summary:
// a suite whose nodes log thousands of lines (the reliability suites) has
// its failures far up in the output, and CI shows only its ends.
class recap : public doctest::IReporter {
 public:
  explicit recap(const doctest::ContextOptions& o) : out_(*o.cout) {}

  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {
    std::lock_guard<std::mutex> guard(lock_);
    if (failures_.empty())
      return;
    out_ << "\n=== " << failures_.size() << " failure" << (failures_.size() == 1 ? "" : "s")
         << " of this run, again:\n";
    for (const auto& f : failures_)
      out_ << f << "\n";
  }
  void test_case_start(const doctest::TestCaseData& t) override { test_ = t.m_name; }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException& e) override {
    std::lock_guard<std::mutex> guard(lock_);
    failures_.push_back("[" + test_ + "] " + (e.is_crash ? "crashed: " : "threw: ") +
                        e.error_string.c_str());
  }
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData& a) override {
    if (!a.m_failed)
      return;
    std::ostringstream line;
    line << "[" << test_ << "] " << doctest::skipPathFromFilename(a.m_file) << ":" << a.m_line
         << ": " << a.m_expr;
    if (a.m_threw)
      line << " threw " << a.m_exception.c_str();
    else if (a.m_decomp.size())
      line << " is " << a.m_decomp.c_str();
    auto n = doctest::IReporter::get_num_active_contexts();
    auto contexts = doctest::IReporter::get_active_contexts();
    for (int i = 0; i < n; ++i) {
      line << "; ";
      contexts[i]->stringify(&line);
    }
    std::lock_guard<std::mutex> guard(lock_);
    failures_.push_back(line.str());
  }
  void log_message(const doctest::MessageData& m) override {
    if (m.m_severity & doctest::assertType::is_warn)
      return;  // MESSAGE: not a failure
    std::lock_guard<std::mutex> guard(lock_);
    failures_.push_back("[" + test_ + "] " + doctest::skipPathFromFilename(m.m_file) + ":" +
                        std::to_string(m.m_line) + ": " + m.m_string.c_str());
  }
  void test_case_skipped(const doctest::TestCaseData&) override {}

 private:
  std::ostream& out_;
  std::mutex lock_;
  std::string test_;
  std::vector<std::string> failures_;
};

REGISTER_LISTENER("recap", 1, recap);

}  // namespace
