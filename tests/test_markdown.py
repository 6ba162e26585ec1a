from __future__ import annotations

import textwrap

import pytest

from rag.errors import RunbookFormatError
from rag.formats.markdown import parse_runbook
from rag.formats.runbook import ParsedRunbook


def parse(text: str, *, fallback_title: str = "fallback") -> ParsedRunbook:
    return parse_runbook(textwrap.dedent(text), fallback_title=fallback_title)


def paths(runbook: ParsedRunbook) -> list[tuple[str, ...]]:
    return [section.heading_path for section in runbook.sections]


def test_atx_and_setext_headings_both_start_sections() -> None:
    runbook = parse(
        """\
        Disk full
        =========

        Intro.

        Diagnosis
        ---------

        Look at df.

        ## Mitigation ##

        Delete logs.
        """
    )
    assert paths(runbook) == [
        ("Disk full",),
        ("Disk full", "Diagnosis"),
        ("Disk full", "Mitigation"),
    ]
    assert [s.text for s in runbook.sections] == ["Intro.", "Look at df.", "Delete logs."]
    assert runbook.has_headings


def test_hash_comment_lines_in_a_fenced_bash_block_are_not_headings() -> None:
    runbook = parse(
        """\
        # Restart

        Run:

        ```bash
        # drain the node first
        kubectl drain node-1
        ## then restart
        systemctl restart kubelet
        ```

        ## Verify

        Check it.
        """
    )
    assert paths(runbook) == [("Restart",), ("Restart", "Verify")]
    assert runbook.sections[0].text == (
        "Run:\n\n```bash\n# drain the node first\nkubectl drain node-1\n"
        "## then restart\nsystemctl restart kubelet\n```"
    )


def test_heading_path_nests_by_level_and_a_sibling_replaces_the_previous_one() -> None:
    runbook = parse(
        """\
        # Alert
        a
        ## Meaning
        b
        ### Details
        c
        ## Impact
        d
        # Other
        e
        ### Deep without parent
        f
        """
    )
    assert paths(runbook) == [
        ("Alert",),
        ("Alert", "Meaning"),
        ("Alert", "Meaning", "Details"),
        ("Alert", "Impact"),
        ("Other",),
        ("Other", "Deep without parent"),
    ]


def test_heading_text_keeps_only_the_text_of_emphasis_code_and_links() -> None:
    runbook = parse(
        """\
        # Fix *the* `etcd` [quorum](https://etcd.io) <span>now</span>

        body
        """
    )
    assert runbook.title == "Fix the etcd quorum now"


def test_a_heading_followed_directly_by_a_subheading_has_no_section_of_its_own() -> None:
    runbook = parse(
        """\
        # Alert

        ## Meaning

        It fired.
        """
    )
    assert paths(runbook) == [("Alert", "Meaning")]


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("---\ntitle: From frontmatter\n---\n# From heading\nbody\n", "From frontmatter"),
        ("## Not an h1\nbody\n# From heading\nbody\n", "From heading"),
        ("## Only h2\nbody\n", "fallback"),
        ("no headings at all\n", "fallback"),
    ],
)
def test_title_is_frontmatter_title_else_first_h1_else_fallback(text: str, title: str) -> None:
    assert parse(text).title == title


def test_preamble_becomes_a_section_under_the_title_when_the_file_has_headings() -> None:
    runbook = parse(
        """\
        ---
        title: Disk alerts
        ---
        Read this first.

        # DiskFull

        body
        """
    )
    assert paths(runbook) == [("Disk alerts",), ("DiskFull",)]
    assert runbook.sections[0].text == "Read this first."


def test_a_page_without_an_h1_has_its_title_at_the_root_of_every_heading_path() -> None:
    runbook = parse(
        """\
        ---
        title: Networking problems
        ---
        Techniques for common problems.

        ## Requests are rejected by Envoy
        a
        ### Response flags
        b
        ## 503 errors after a destination rule
        c
        """
    )
    assert paths(runbook) == [
        ("Networking problems",),
        ("Networking problems", "Requests are rejected by Envoy"),
        ("Networking problems", "Requests are rejected by Envoy", "Response flags"),
        ("Networking problems", "503 errors after a destination rule"),
    ]


def test_a_file_without_headings_is_one_section_with_an_empty_path() -> None:
    runbook = parse("Just a note.\n\nAnother paragraph.\n")
    assert not runbook.has_headings
    assert paths(runbook) == [()]
    assert runbook.sections[0].text == "Just a note.\n\nAnother paragraph."


def test_a_heading_nested_in_a_list_item_cuts_a_section_with_its_body_dedented() -> None:
    runbook = parse(
        """\
        # Alert

        1. Check the logs:

           ### Narrow selector

            In this case, look for le.
        """
    )
    assert paths(runbook)[-1] == ("Alert", "Narrow selector")
    assert runbook.sections[-1].text == "In this case, look for le."


def test_yaml_frontmatter_fields_are_parsed() -> None:
    runbook = parse(
        """\
        ---
        id: payments/gateway-5xx
        service: payments
        tags: [gateway, http]
        owner: team-payments
        updated: 2024-03-05
        weight: 20
        ---
        Body.
        """
    )
    frontmatter = runbook.frontmatter
    assert frontmatter.id == "payments/gateway-5xx"
    assert frontmatter.service == "payments"
    assert frontmatter.tags == ("gateway", "http")
    assert frontmatter.owner == "team-payments"
    assert frontmatter.updated == "2024-03-05"


def test_a_frontmatter_key_without_a_value_leaves_the_field_unset() -> None:
    runbook = parse("---\ntitle:\ntags:\n---\nBody.\n")
    assert runbook.frontmatter.tags == ()
    assert runbook.title == "fallback"


def test_toml_frontmatter_is_parsed_into_the_same_fields() -> None:
    runbook = parse(
        """\
        +++
        title = "Hugo page"
        tags = ["hugo"]
        updated = 2024-03-05
        +++
        Body.
        """
    )
    assert runbook.title == "Hugo page"
    assert runbook.frontmatter.tags == ("hugo",)
    assert runbook.frontmatter.updated == "2024-03-05"


def test_windows_line_endings_and_a_byte_order_mark_are_understood() -> None:
    runbook = parse_runbook("\ufeff---\r\ntitle: T\r\n---\r\n# H\r\nbody\r\n", fallback_title="f")
    assert runbook.title == "T"
    assert runbook.sections[0].text == "body"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (
            "---\ntitle: ok\ntags: a: b\n---\nBody.\n",
            "invalid frontmatter: line 3: mapping values are not allowed here",
        ),
        (
            '+++\ntitle = "a"\nbad line\n+++\nBody.\n',
            "invalid frontmatter: Expected '=' after a key in a key/value pair"
            " (at line 3, column 5)",
        ),
        (
            "---\ntitle: \x07\n---\nBody.\n",
            "invalid frontmatter: unacceptable character #x0007:"
            " special characters are not allowed",
        ),
        ("---\n- a\n- b\n---\nBody.\n", "frontmatter must be a mapping, not list"),
        ("---\njust text\n---\nBody.\n", "frontmatter must be a mapping, not str"),
        ("---\ntags: {a: 1}\n---\nBody.\n", "frontmatter 'tags' must be a list of strings"),
        ("---\ntitle: [a, b]\n---\nBody.\n", "frontmatter 'title' must be a string"),
        (
            "---\ntitle: never closed\nBody.\n",
            "frontmatter opened with '---' on line 1 is never closed",
        ),
        ("", "empty runbook"),
        ("  \n\n\t\n", "empty runbook"),
        ("---\ntitle: only frontmatter\n---\n\n   \n", "empty runbook"),
        ("<!-- nothing but a comment -->\n", "empty runbook"),
        ("# Title\n\n## Section\n", "no text under any heading"),
    ],
)
def test_unusable_runbooks_are_rejected_with_a_specific_reason(text: str, reason: str) -> None:
    with pytest.raises(RunbookFormatError) as caught:
        parse_runbook(text, fallback_title="f")
    assert caught.value.reason == reason
    assert caught.value.code == "runbook_format_invalid"


def test_hugo_shortcodes_are_stripped_keeping_what_they_wrap() -> None:
    runbook = parse(
        """\
        # Disk {{< badge "p1" >}}

        {{< hint warning >}}
        Never delete the WAL.
        {{< /hint >}}

        {{% alert title="Note" %}}Check **quotas** first.{{% /alert %}}

        See [the other runbook]({{< ref "./NodeRAIDDegraded.md" >}}).
        """
    )
    assert runbook.title == "Disk"
    assert runbook.sections[0].text == (
        "\nNever delete the WAL.\n\n\nCheck **quotas** first.\n\n"
        "See [the other runbook](./NodeRAIDDegraded.md)."
    ).lstrip("\n")


def test_html_comments_are_removed_but_code_and_go_templates_are_kept_verbatim() -> None:
    runbook = parse(
        """\
        # Alert <!-- owner: sre -->

        <!--
        ## Not a heading: it is commented out
        -->
        Use `<!-- literal -->` and:

        ```html
        <!-- kept: this is code -->
        {{< kept >}}
        ```

        oc get nodes -o template='{{range .items}}{{.metadata.name}}{{end}}'
        """
    )
    assert paths(runbook) == [("Alert",)]
    assert runbook.title == "Alert"
    assert runbook.sections[0].text == (
        "Use `<!-- literal -->` and:\n\n```html\n<!-- kept: this is code -->\n{{< kept >}}\n```"
        "\n\noc get nodes -o template='{{range .items}}{{.metadata.name}}{{end}}'"
    )
