//! The operator CLI's pure commands.

#[test]
fn replay_prints_every_ply_with_passes_and_the_result() {
    let text = discs::cli::replay("four_in_a_row", "4141414").expect("a game");
    assert!(text.starts_with("ply 0: start, R to move\n"));
    assert!(text.contains("ply 7: R plays 4"));
    assert!(
        text.ends_with("over: R wins (FourInARow), discs R 4 - Y 3\n"),
        "{text}"
    );
    let err = discs::cli::replay("four_in_a_row", "41414149").expect_err("an illegal move");
    assert!(err.to_string().contains("ply 8"), "{err}");
    assert!(discs::cli::replay("chess", "e2e4").is_err());
    let reversi = discs::cli::replay("reversi", "f5d6c3").expect("a game");
    assert!(reversi.contains("ply 3: B plays c3"));
    assert!(reversi.contains("W to move; legal:"));
}
