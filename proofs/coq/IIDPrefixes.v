(* I.i.d. drafts: alpha* is the minimum of (star) over the n + 1 prefixes of the
   p/q order (docs/theory.md, Lemma 2.3 with phi(t) = t^k, and Theorem 2.2), and
   the K-draft condition needs only those n + 1 checks (Khisti et al.'s condition,
   docs/theory.md section 2.1 and Theorem 4.1).

   The k drafts are a k-tuple f : {ffun 'I_k -> 'I_n} of tokens drawn i.i.d. from
   q: D(f) = q(f 0) * ... * q(f (k-1)), and set(x-bar) = {f 0, ..., f (k-1)}.
   Then D(set \subset S) = q(S)^k ([iid_Dsub]).  The tokens 0, ..., n-1 are sorted
   by p/q ascending (q = 0 last), as in SortedPrefixes.v; P_j and Q_j are the
   masses of the first j tokens. *)
From mathcomp Require Import all_ssreflect all_algebra.
From OptAccept Require Import Duality SortedPrefixes.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import Order.TTheory GRing.Theory Num.Theory.
Local Open Scope ring_scope.

Section IID.

Variables (R : realFieldType) (n k : nat) (p q : 'I_n -> R).
Hypotheses (p_ge0 : forall i, 0 <= p i) (q_ge0 : forall i, 0 <= q i).
Hypotheses (p_sum1 : \sum_i p i = 1) (q_sum1 : \sum_i q i = 1).
Hypothesis sorted : forall i j : 'I_n, (i < j)%N -> p i * q j <= p j * q i.

(* the law of k i.i.d. drafts from q, as k-tuples, and the set of drafted tokens *)
Definition iid_law (f : {ffun 'I_k -> 'I_n}) : R := \prod_i q (f i).
Definition iid_draft (f : {ffun 'I_k -> 'I_n}) : {set 'I_n} := [set f i | i in 'I_k].

Lemma iid_law_ge0 f : 0 <= iid_law f.
Proof. by apply: prodr_ge0 => i _. Qed.

Lemma iid_Dsub S : Dsub iid_law iid_draft S = (\sum_(y in S) q y) ^+ k.
Proof.
have -> : (\sum_(y in S) q y) ^+ k = \prod_(i < k) \sum_(y in S) q y.
  by rewrite prodr_const card_ord.
rewrite [RHS](eq_bigr (fun i => \sum_y if y \in S then q y else 0));
  last by move=> i _; rewrite big_mkcond.
rewrite bigA_distr_bigA /Dsub [LHS]big_mkcond /=; apply: eq_bigr => f _.
case: ifP => hf.
  rewrite /iid_law; apply: eq_bigr => i _; case: ifP => // /negP []; apply: (subsetP hf).
  by apply/imsetP; exists i.
have [i fi] : exists2 i, f i \notin S & true.
  case/subsetPn: (negbT hf) => y /imsetP [i _ ->] yS; by exists i.
by rewrite (bigD1 i) //= (negbTE fi) mul0r.
Qed.

Lemma iid_law_sum1 : \sum_f iid_law f = 1.
Proof.
have := iid_Dsub setT; rewrite /Dsub (eq_bigl xpredT) => [->|f]; last by rewrite subsetT.
rewrite (eq_bigl xpredT) ?q_sum1 ?expr1n // => y; by rewrite inE.
Qed.

(* the value of the first j tokens in (star): P_j + 1 - Q_j^k *)
Definition prefix_value (j : nat) :=
  \sum_(i in prefix n j) p i + 1 - (\sum_(i in prefix n j) q i) ^+ k.

(* alpha* for k i.i.d. drafts: an optimal coupling pi exists (no coupling accepts more)
   and its acceptance is the minimum over j = 0..n of P_j + 1 - Q_j^k *)
Theorem iid_alpha_star : exists pi, exists j : 'I_n.+1,
  [/\ is_coupling p iid_law pi,
      forall pi', is_coupling p iid_law pi' ->
        acceptance iid_draft pi' <= acceptance iid_draft pi,
      acceptance iid_draft pi = prefix_value j
    & forall j' : 'I_n.+1, acceptance iid_draft pi <= prefix_value j'].
Proof.
have [pi [S [hpi opt Smin accE]]] :=
  strong_duality_star iid_draft p_ge0 p_sum1 iid_law_ge0 iid_law_sum1.
have cutE S' : cut p iid_law iid_draft S' = F p q (fun t => t ^+ k) S'.
  by rewrite /cut iid_Dsub.
have [j hj] := @sorted_prefixes_min R n p q (fun t => t ^+ k) p_ge0 q_ge0 q_sum1 sorted
  (fun u v w => @pow_convex R k u v w).
have accj : acceptance iid_draft pi = prefix_value j.
  have e : prefix_value j = cut p iid_law iid_draft (prefix n j) by rewrite cutE.
  by apply/le_anti; rewrite accE e Smin /= !cutE hj.
exists pi, j; split=> // j'; rewrite accj.
exact: (hj (prefix n j')).
Qed.

(* the K-draft condition for i.i.d. drafts (Khisti et al., Theorem 2 for k = 2, and
   their Remark 2 for every k): alpha* = 1 iff P_j >= Q_j^k for the n + 1 prefixes *)
Theorem iid_kdraft_condition :
  (exists pi, is_coupling p iid_law pi /\ acceptance iid_draft pi = 1) <->
  (forall j : 'I_n.+1, (\sum_(i in prefix n j) q i) ^+ k <= \sum_(i in prefix n j) p i).
Proof.
rewrite (kdraft_condition iid_draft p_ge0 p_sum1 iid_law_ge0 iid_law_sum1).
split=> [h j|h S]; first by rewrite -iid_Dsub; apply: h.
rewrite iid_Dsub.
have [j hj] := @sorted_prefixes R n p q (fun t => t ^+ k) p_ge0 q_ge0 q_sum1 sorted
  (fun u v w => @pow_convex R k u v w) S.
move: hj (h j); rewrite /F => hj hPQ.
have h1 : 1 <= \sum_(i in prefix n j) p i + 1 - (\sum_(i in prefix n j) q i) ^+ k.
  by rewrite addrAC ler_addr subr_ge0.
have h2 := le_trans h1 hj; rewrite addrAC ler_addr subr_ge0 in h2.
exact: h2.
Qed.

End IID.

Print Assumptions iid_Dsub.
Print Assumptions iid_alpha_star.
Print Assumptions iid_kdraft_condition.
