#include "answer/kb_bitext.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "answer/kb_csv.h"

namespace hotline::answer {

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

constexpr std::string_view kAnonymized = " Anonymized";

// Stock phrases of written support replies that carry no answer when spoken.
const std::vector<std::string_view>& StockOpeners() {
  static const std::vector<std::string_view> k = {
      "i understand", "i'm here", "i am here", "thank you", "thanks", "we appreciate",
      "i apologize", "i'm sorry", "i am sorry", "certainly", "of course", "absolutely",
      "rest assured", "i'm glad", "i'm delighted", "i'm thrilled", "i'm really", "great",
      "no worries", "no problem", "sure", "i can", "let me", "allow me", "i'd be", "i would be",
      "i hope", "if you have any", "should you have", "feel free", "we value", "your feedback",
      "i completely", "i totally", "happy to", "we're here", "we are here", "i've", "i have",
      "please let me know", "is there anything", "you are not alone", "you're not alone",
      "i recommend", "we understand", "it's great", "we're thrilled", "we're delighted",
      "oh no", "wow", "hello", "hi ", "welcome", "i'm", "i am", "if you encounter",
      "if you need", "if you still", "if you're", "if you are", "please don't hesitate",
      "don't hesitate", "once i", "with this", "they ", "our dedicated", "please note",
      "please provide", "to assist you", "it's important", "not to worry", "making changes"};
  return k;
}

// Words that make a sentence about one customer or about the agent itself, not a general answer.
bool PersonalOrAgentVoice(std::string_view sentence) {
  static const std::set<std::string> kWords = {
      "i", "i'm", "i'll", "i've", "i'd", "me", "my", "mr", "ms", "mrs", "they", "they're",
      "they'll", "them", "these", "gold", "premium", "freemium", "platinum", "standard", "pro",
      "toronto", "free"};
  std::string word;
  for (size_t i = 0; i <= sentence.size(); ++i) {
    const char ch = i < sentence.size() ? sentence[i] : ' ';
    if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '\'') {
      word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
    } else {
      if (kWords.count(word)) return true;
      word.clear();
    }
  }
  for (char ch : sentence) {
    if (std::isdigit(static_cast<unsigned char>(ch))) return true;  // order numbers, amounts
  }
  return false;
}

// Sentences that tell the caller what to do score higher than statements.
double ActionBonus(std::string_view sentence) {
  const std::string low = Lower(sentence);
  for (std::string_view p : {"to ", "you can ", "simply ", "visit ", "log in", "go to ", "please visit",
                             "please log", "our ", "we offer", "you may "}) {
    if (StartsWith(low, p)) return 0.5;
  }
  return 0.0;
}

// Fixes doubled determiners left by filling "our {{Website Name}}" with "our website".
std::string Tidy(std::string s) {
  for (auto [from, to] : {std::pair<std::string_view, std::string_view>{"our our ", "our "},
                          {"your our ", "our "}, {"the our ", "our "}, {"your your ", "your "},
                          {"the your ", "your "}, {"  ", " "}}) {
    for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p)) {
      s.replace(p, from.size(), to);
    }
  }
  return s;
}

const std::set<std::string>& StopWords() {
  static const std::set<std::string> k = {
      "the", "a", "an", "to", "of", "and", "or", "in", "on", "for", "your", "you", "our", "we",
      "is", "are", "be", "it", "this", "that", "with", "can", "will", "at", "by", "as", "if",
      "any", "from", "please", "my", "me", "i", "us", "have", "has", "do", "so", "all", "not"};
  return k;
}

std::vector<std::string> Words(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      cur.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else if (!cur.empty()) {
      out.push_back(std::move(cur));
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

// Replaces each {{Placeholder}} with fn(placeholder).
template <class Fn>
std::string MapPlaceholders(std::string_view s, Fn fn) {
  std::string out;
  size_t pos = 0;
  for (;;) {
    size_t open = s.find("{{", pos);
    if (open == std::string_view::npos) break;
    size_t close = s.find("}}", open + 2);
    if (close == std::string_view::npos) break;
    out.append(s.substr(pos, open - pos));
    out.append(fn(s.substr(open + 2, close - open - 2)));
    pos = close + 2;
  }
  out.append(s.substr(pos));
  return out;
}

// Sentences of a response that could be spoken as an answer, in order.
std::vector<std::string> ContentSentences(std::string_view response) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= response.size()) {
    size_t nl = response.find('\n', pos);
    if (nl == std::string_view::npos) nl = response.size();
    std::string_view line = Trim(response.substr(pos, nl - pos));
    pos = nl + 1;
    if (line.empty()) continue;
    // Numbered or bulleted steps read badly aloud one by one.
    if (std::isdigit(static_cast<unsigned char>(line[0])) || line[0] == '-' || line[0] == '*' ||
        StartsWith(line, "\xe2\x80\xa2")) {
      continue;
    }
    size_t start = 0;
    for (size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      const bool end = (c == '.' || c == '!' || c == '?') &&
                       (i + 1 == line.size() || line[i + 1] == ' ');
      if (!end && i + 1 != line.size()) continue;
      std::string_view sentence = Trim(line.substr(start, i + 1 - start));
      start = i + 1;
      if (sentence.size() < 25 || sentence.back() == ':' || sentence.find(':') != std::string_view::npos) continue;
      if (sentence.back() != '.') continue;  // questions and exclamations are not answers
      const std::string low = Lower(sentence);
      bool stock = false;
      for (auto p : StockOpeners()) stock = stock || StartsWith(low, p);
      if (stock || low.find('"') != std::string::npos || low.find('[') != std::string::npos) continue;
      // Placeholders of three or more words stand for content the corpus never gives
      // ("{{Refund Policy Details}}"); a sentence built around one says nothing when spoken.
      bool content_placeholder = false;
      MapPlaceholders(sentence, [&](std::string_view p) {
        if (Words(p).size() >= 3 && PlaceholderSpoken(p) == std::string(Trim(p))) {
          content_placeholder = true;
        }
        return std::string();
      });
      if (content_placeholder) continue;
      if (PersonalOrAgentVoice(MapPlaceholders(sentence, [](std::string_view) { return std::string("x"); }))) {
        continue;
      }
      out.emplace_back(sentence);
    }
  }
  return out;
}

std::string Humanize(std::string_view intent) {
  std::string out(intent);
  for (char& c : out) c = c == '_' ? ' ' : c;
  if (!out.empty()) out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  return out;
}

std::string CsvField(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += "\"\"";
    else out.push_back(c);
  }
  return out + "\"";
}

struct Candidate {
  std::string text;  // one or two sentences, with placeholders
  size_t response = 0;
  double score = 0;
};

}  // namespace

std::string PlaceholderSlot(std::string_view placeholder) {
  std::string_view p = Trim(placeholder);
  if (p.size() > kAnonymized.size() && p.substr(p.size() - kAnonymized.size()) == kAnonymized) {
    p.remove_suffix(kAnonymized.size());
  }
  std::string out;
  for (char c : p) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else if (!out.empty() && out.back() != '_') {
      out.push_back('_');
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out.empty() ? "value" : out;
}

std::string PlaceholderSpoken(std::string_view placeholder) {
  const std::string slot = PlaceholderSlot(placeholder);
  static const std::map<std::string, std::string> kSpoken = {
      {"customer_support_phone_number", "our support line"},
      {"support_phone_number", "our support line"},
      {"customer_service_phone_number", "our support line"},
      {"phone_number", "our support line"},
      {"phone", "our support line"},
      {"live_chat", "live chat"},
      {"website_name", "our website"},
      {"website_url", "our website"},
      {"website", "our website"},
      {"website_or_app", "our website or app"},
      {"customer_support_availability", "around the clock"},
      {"customer_support_hours", "during business hours"},
      {"customer_service_hours", "during business hours"},
      {"customer_support_email", "our support email"},
      {"customer_support_email_address", "our support email"},
      {"support_email", "our support email"},
      {"email", "our support email"},
      {"company_name", "our company"},
      {"number_of_days", "a few days"},
  };
  if (auto it = kSpoken.find(slot); it != kSpoken.end()) return it->second;
  std::string_view p = Trim(placeholder);
  if (p.size() > kAnonymized.size() && p.substr(p.size() - kAnonymized.size()) == kAnonymized) {
    p.remove_suffix(kAnonymized.size());
    return "your " + Lower(p);
  }
  return std::string(p);  // a screen or button name: said as written
}

Result<std::vector<Article>> DeriveBitextArticles(std::string_view csv_text,
                                                  const BitextDeriveOptions& options) {
  CsvReader reader(csv_text);
  CsvRecord rec;
  ASSIGN_OR_RETURN(bool has_header, reader.Next(rec));
  if (!has_header) return InvalidArgumentError("Bitext corpus is empty");
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < rec.fields.size(); ++i) col[rec.fields[i]] = i;
  for (const char* need : {"instruction", "intent", "response", "entity_value"}) {
    if (!col.count(need)) {
      return InvalidArgumentError(std::string("Bitext corpus lacks the column '") + need + "'");
    }
  }
  struct IntentData {
    std::vector<std::string> responses;
    std::vector<std::string> questions;
  };
  std::map<std::string, IntentData> intents;
  for (;;) {
    ASSIGN_OR_RETURN(bool more, reader.Next(rec));
    if (!more) break;
    if (rec.fields.size() != col.size()) {
      return InvalidArgumentError("Bitext corpus line " + std::to_string(rec.line) + ": has " +
                                  std::to_string(rec.fields.size()) + " fields");
    }
    IntentData& d = intents[rec.fields[col["intent"]]];
    d.responses.push_back(rec.fields[col["response"]]);
    // Example questions carry no entity values (order numbers, names): the value is cut out of
    // an utterance that has one ("can i edit order 7322" -> "can i edit order").
    std::string question = rec.fields[col["instruction"]];
    const std::string& value = rec.fields[col["entity_value"]];
    if (!value.empty()) {
      const size_t at = question.find(value);
      if (at == std::string::npos) continue;
      question.erase(at, value.size());
      std::string collapsed;
      for (char c : question) {
        if (c == ' ' && (collapsed.empty() || collapsed.back() == ' ')) continue;
        collapsed.push_back(c);
      }
      question = std::string(Trim(collapsed));
    }
    if (!question.empty()) d.questions.push_back(std::move(question));
  }

  std::vector<Article> articles;
  for (auto& [intent, d] : intents) {
    // Document frequency of words over the intent's responses.
    std::map<std::string, int> df;
    for (const auto& r : d.responses) {
      std::set<std::string> seen;
      for (auto& w : Words(MapPlaceholders(r, [](std::string_view) { return std::string(); }))) {
        if (!StopWords().count(w)) seen.insert(w);
      }
      for (const auto& w : seen) ++df[w];
    }
    const std::vector<std::string> intent_words = Words(Humanize(intent));
    std::vector<Candidate> candidates;
    for (size_t ri = 0; ri < d.responses.size(); ++ri) {
      std::vector<std::string> sentences = ContentSentences(d.responses[ri]);
      for (size_t si = 0; si < sentences.size() && si < 3; ++si) {
        std::string text = sentences[si];
        // A short sentence takes its successor along, as one spoken answer of two sentences.
        if (text.size() < 90 && si + 1 < sentences.size()) text += " " + sentences[si + 1];
        const std::string spoken = Tidy(MapPlaceholders(text, PlaceholderSpoken));
        if (spoken.size() > static_cast<size_t>(options.max_answer_chars)) continue;
        double sum = 0;
        int n = 0;
        std::set<std::string> words;
        for (auto& w : Words(spoken)) {
          if (StopWords().count(w)) continue;
          words.insert(w);
          sum += static_cast<double>(df[w]) / static_cast<double>(d.responses.size());
          ++n;
        }
        if (n < 4) continue;
        double bonus = 0;
        for (const auto& w : intent_words) bonus += words.count(w) ? 0.5 : 0.0;
        bonus += ActionBonus(text);
        candidates.push_back(Candidate{std::move(text), ri, sum / n + bonus});
      }
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
    std::set<size_t> used_responses;
    std::set<std::string> used_texts;
    int made = 0;
    for (const auto& c : candidates) {
      if (made >= options.articles_per_intent) break;
      const std::string spoken = Tidy(MapPlaceholders(c.text, PlaceholderSpoken));
      if (used_responses.count(c.response) || used_texts.count(spoken)) continue;
      used_responses.insert(c.response);
      used_texts.insert(spoken);
      ++made;
      Article a;
      a.id = intent + "-" + std::to_string(made);
      a.title = Humanize(intent);
      a.intent = intent;
      a.body = spoken;
      a.answer_template = MapPlaceholders(
          c.text, [](std::string_view p) { return "{" + PlaceholderSlot(p) + "}"; });
      if (a.answer_template == a.body) a.answer_template.clear();
      // Example questions: evenly spaced through the intent's utterances sorted by length, so
      // short and long phrasings are both represented; article k takes its own slice.
      std::vector<std::string> qs = d.questions;
      std::sort(qs.begin(), qs.end(), [](const std::string& x, const std::string& y) {
        return x.size() != y.size() ? x.size() < y.size() : x < y;
      });
      qs.erase(std::unique(qs.begin(), qs.end()), qs.end());
      const int want = options.questions_per_article;
      for (int i = 0; i < want && !qs.empty(); ++i) {
        const size_t idx = (static_cast<size_t>(i * options.articles_per_intent + made - 1) *
                            qs.size()) / static_cast<size_t>(want * options.articles_per_intent);
        if (!a.questions.empty()) a.questions += "|";
        a.questions += std::string(Trim(qs[std::min(idx, qs.size() - 1)]));
      }
      articles.push_back(std::move(a));
    }
  }
  return articles;
}

std::string ArticlesToCsv(const std::vector<Article>& articles) {
  std::string out = "id,title,intent,body,template,questions\n";
  for (const auto& a : articles) {
    out += CsvField(a.id) + "," + CsvField(a.title) + "," + CsvField(a.intent) + "," +
           CsvField(a.body) + "," + CsvField(a.answer_template) + "," + CsvField(a.questions) + "\n";
  }
  return out;
}

}  // namespace hotline::answer
